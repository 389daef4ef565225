package geo

import (
	"fmt"
	"strings"

	"github.com/eudr/eudr/geo/borders"
)

// ReasonOutsideProducerCountry: a part of the plot lies more than
// borders.BufferM from the boundary of its producerCountry. The plot is
// FAILED: screening a plot in the wrong place says nothing true about it.
const ReasonOutsideProducerCountry = "OUTSIDE_PRODUCER_COUNTRY"

// Outcomes of the producer country check (CountryCheck.Outcome).
const (
	CountryIn         = "IN_COUNTRY"  // every part within the buffer of the country
	CountryOutside    = "OUTSIDE"     // some part beyond it: FAILED
	CountryNoBoundary = "NO_BOUNDARY" // no boundary for the code: not checked
)

// CountryCheck is how a plot's producerCountry was checked against where
// it lies, for its evidence.
type CountryCheck struct {
	Country string // the producerCountry
	Outcome string // CountryIn, CountryOutside or CountryNoBoundary
	// FoundIn are the codes of the countries holding the first position of
	// the first part outside, sorted; empty at sea. Set when Outcome is
	// CountryOutside.
	FoundIn []string
}

// CountryBoundaries names the boundaries the check uses, and CountryBufferM
// how far outside them a plot may lie and still be in the country.
const (
	CountryBoundaries = borders.Source
	CountryBufferM    = borders.BufferM
)

// WithBorders returns a copy of ix with which Assess also checks that a
// plot lies in its producerCountry (FAILED OUTSIDE_PRODUCER_COUNTRY). The
// appliance screens with it in production and the sandbox alike; an Index
// without it serves tests of the rest of the screening, whose plots need
// not lie on land.
func (ix *Index) WithBorders() *Index {
	out := *ix
	out.borders = true
	return &out
}

// checkCountry checks that each part of g (each polygon's exterior ring,
// each point) lies within borders.BufferM of country's boundary. A code
// the boundaries lack (a territory too small for 1:10m) passes unchecked.
// detail is set when the check fails; err only when the embedded
// boundaries cannot be read.
func checkCountry(g Geometry, country string) (c CountryCheck, detail string, err error) {
	c = CountryCheck{Country: country}
	want, err := borders.Find(country)
	if err != nil {
		return c, "", err
	}
	if want == nil {
		c.Outcome = CountryNoBoundary
		return c, "", nil
	}
	var parts [][][2]float64
	what := "point"
	if g.IsPoint() {
		for _, p := range g.Points {
			parts = append(parts, [][2]float64{p})
		}
	} else {
		what = "polygon"
		for _, p := range g.Polygons {
			if len(p) > 0 {
				parts = append(parts, p[0])
			}
		}
	}
	for i, part := range parts {
		if want.Near(part) {
			continue
		}
		c.Outcome = CountryOutside
		at, err := borders.At(part[0])
		if err != nil {
			return c, "", err
		}
		var b strings.Builder
		b.WriteString("the plot")
		if len(parts) > 1 {
			fmt.Fprintf(&b, "'s %s %d", what, i)
		}
		if len(at) == 0 {
			fmt.Fprintf(&b, " lies in no country: at sea? It is more than %s from %s, its producerCountry; check that each position is longitude first, then latitude",
				km(borders.BufferM), name(want))
		} else {
			names := make([]string, len(at))
			for j, a := range at {
				names[j] = name(a)
				c.FoundIn = append(c.FoundIn, a.Code)
			}
			fmt.Fprintf(&b, " lies in %s, not in %s, its producerCountry (more than %s from its boundary); correct producerCountry or the coordinates",
				strings.Join(names, " and "), name(want), km(borders.BufferM))
		}
		return c, b.String(), nil
	}
	c.Outcome = CountryIn
	return c, "", nil
}

func name(c *borders.Country) string { return c.Name + " (" + c.Code + ")" }

func km(m float64) string { return fmt.Sprintf("%g km", m/1000) }
