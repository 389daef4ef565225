package euis

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
)

// splittable are the codes Split cures; any other violation makes Split
// fail.
var splittable = []string{CodeTooManyCommodities, CodeTooManyProducersPerCommodity, CodeTooManyProducers, CodeGeolocationTooLarge}

// Split divides a statement that breaks only the size limits of the
// information system (MaxCommodities, MaxProducersPerCommodity,
// MaxProducers, MaxGeolocationBytes) into statements that each fit. A
// statement within the limits comes back alone and unchanged. A statement
// that breaks any other rule is not split: the error is its Violations
// (without the size violations Split would cure), and so is a producer whose
// geolocation alone is over MaxGeolocationBytes.
//
// The rule:
//
//  1. A producer is never divided, and neither is a commodity that fits
//     in a statement: at most MaxProducersPerCommodity producers and
//     MaxGeolocationBytes of geolocation.
//  2. A commodity that does not fit is divided into parts of consecutive
//     producers, each part as large as the two limits allow. Each part
//     repeats the commodity's HS heading, description, percentage estimate
//     and species; its net weight and supplementary unit are the
//     commodity's, apportioned by the part's share of the producers,
//     rounded down to the millionth (to the unit for a whole number of NAR
//     or NPR), the last part taking the remainder, so the parts add up
//     exactly to the whole.
//  3. The commodities and parts are packed in order into statements; the
//     next one opens a new statement when it would take the current one
//     over MaxCommodities, MaxProducers or MaxGeolocationBytes. Commodities
//     without producers (covered by referenced statements) go first, into
//     the first statement.
//  4. The referenced statements go with the first statement only: a
//     referenced statement becomes GROUPED and cannot be grouped twice.
//  5. Positions follow from the order, so they start again at 1 in each
//     statement. With more than one statement, each internal reference
//     gets the suffix "-1", "-2", ... in order, the reference cut short
//     where the suffix would take it over MaxInternalReferenceLen; an
//     empty internal reference stays empty.
//
// Every statement returned passes Validate.
func Split(s Statement) ([]Statement, error) {
	var rest Violations
	cured := false
	for _, v := range check(s) {
		if slices.Contains(splittable, v.Code) {
			cured = true
			continue
		}
		rest = append(rest, v)
	}
	if len(rest) > 0 {
		return nil, rest
	}
	if !cured {
		return []Statement{s}, nil
	}

	type part struct {
		c     Commodity
		bytes int64
	}
	var parts []part
	for _, c := range s.Commodities {
		for _, pc := range divide(c) {
			parts = append(parts, part{pc, geolocation(pc)})
		}
	}
	// Commodities without producers first: they need the references,
	// which stay with the first statement.
	slices.SortStableFunc(parts, func(a, b part) int {
		return boolInt(len(a.c.Producers) > 0) - boolInt(len(b.c.Producers) > 0)
	})

	var out []Statement
	var producers int
	var size int64
	for _, p := range parts {
		if n := len(out); n == 0 || len(out[n-1].Commodities)+1 > MaxCommodities || producers+len(p.c.Producers) > MaxProducers || size+p.bytes > MaxGeolocationBytes {
			next := s
			next.Commodities, next.ReferencedStatements = nil, nil
			next.SupplierOperatorUUIDs = slices.Clone(s.SupplierOperatorUUIDs)
			out = append(out, next)
			producers, size = 0, 0
		}
		cur := &out[len(out)-1]
		cur.Commodities = append(cur.Commodities, p.c)
		producers += len(p.c.Producers)
		size += p.bytes
	}
	out[0].ReferencedStatements = slices.Clone(s.ReferencedStatements)
	if len(out) > 1 && s.InternalReference != "" {
		for i := range out {
			out[i].InternalReference = suffixed(s.InternalReference, i+1)
		}
	}
	for i, o := range out {
		if err := Validate(o); err != nil {
			return nil, fmt.Errorf("split statement %d of %d: %w", i+1, len(out), err)
		}
	}
	return out, nil
}

// divide returns c as it is if it fits in a statement, else its parts.
func divide(c Commodity) []Commodity {
	var groups [][]Producer
	start, size := 0, int64(0)
	for j, p := range c.Producers {
		b := geometrySize(p)
		if j > start && (j-start+1 > MaxProducersPerCommodity || size+b > MaxGeolocationBytes) {
			groups = append(groups, c.Producers[start:j])
			start, size = j, 0
		}
		size += b
	}
	if len(groups) == 0 {
		return []Commodity{c}
	}
	groups = append(groups, c.Producers[start:])

	counts := make([]uint64, len(groups))
	for i, g := range groups {
		counts[i] = uint64(len(g))
	}
	weights := apportion(c.NetWeightKg, counts, false)
	var units []Decimal
	if c.SupplementaryUnit != nil {
		whole := (c.SupplementaryUnitType == "NAR" || c.SupplementaryUnitType == "NPR") && c.SupplementaryUnit.IsInteger()
		units = apportion(*c.SupplementaryUnit, counts, whole)
	}
	out := make([]Commodity, len(groups))
	for i, g := range groups {
		pc := c
		pc.Producers = g
		pc.SpeciesInfo = slices.Clone(c.SpeciesInfo)
		pc.NetWeightKg = weights[i]
		if units != nil {
			u := units[i]
			pc.SupplementaryUnit = &u
		}
		if c.PercentageEstimation != nil {
			p := *c.PercentageEstimation
			pc.PercentageEstimation = &p
		}
		out[i] = pc
	}
	return out
}

// apportion divides v in proportion to counts, in millionths (in units when
// whole), rounding down, the last share taking the remainder.
func apportion(v Decimal, counts []uint64, whole bool) []Decimal {
	scale := uint64(1_000_000)
	if whole {
		scale = 1
	}
	total := v.millionths(whole) // v <= MaxQuantity: < 2^54 millionths
	var n uint64
	for _, c := range counts {
		n += c
	}
	out := make([]Decimal, len(counts))
	var given uint64
	for i, c := range counts {
		share := total - given
		if i < len(counts)-1 {
			hi, lo := bits.Mul64(total, c)
			share, _ = bits.Div64(hi, lo, n) // hi < n since c <= n
		}
		given += share
		out[i] = DecimalOfMillionths(share * (1_000_000 / scale))
	}
	return out
}

// geolocation returns the geolocation bytes of a commodity.
func geolocation(c Commodity) int64 {
	var n int64
	for _, p := range c.Producers {
		n += geometrySize(p)
	}
	return n
}

// suffixed returns ref with "-n", cut short to fit MaxInternalReferenceLen.
func suffixed(ref string, n int) string {
	suffix := "-" + strconv.Itoa(n)
	r := []rune(ref)
	if room := MaxInternalReferenceLen - len(suffix); len(r) > room {
		r = r[:room]
	}
	return string(r) + suffix
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
