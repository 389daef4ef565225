package batch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/storage"
)

// Limits of a batch request (the OpenAPI document states them too).
const (
	// MaxPolygons is the most polygonIds a batch may list.
	MaxPolygons = 10_000
	// MaxReferenceLen is the longest batchReference, in characters.
	MaxReferenceLen = 100
	// MaxQuantity bounds netMassKg and supplementaryUnit: the EU
	// information system takes decimal(16,6).
	MaxQuantity = 1e10
)

// maxQuantity is MaxQuantity as a Decimal, for exact comparison.
const maxQuantity euis.Decimal = "10000000000"

// notANumber is the issue of a quantity given as another JSON value (a
// string of digits too), as the API words a wrongly typed member.
func notANumber(d euis.Decimal) string {
	kind := "a number out of range"
	switch s := string(d); {
	case strings.HasPrefix(s, `"`):
		kind = "string"
	case s == "true" || s == "false":
		kind = "bool"
	case strings.HasPrefix(s, "["):
		kind = "array"
	case strings.HasPrefix(s, "{"):
		kind = "object"
	}
	return "must be a number, not " + kind
}

// tooPrecise is the issue of a quantity with more fraction digits than
// the EU system takes: it is refused rather than rounded, so that what
// is declared is what was given.
const tooPrecise = "must have at most 6 digits after the decimal point (the EU system's precision)"

// SupplementaryUnitTypes are the qualifiers of a supplementary unit the EU
// information system takes (research/eudr.md section 1.7): thousands of
// items, square metres, cubic metres, metres, number of items, number of
// pairs.
var SupplementaryUnitTypes = []string{"KSD", "MTK", "MTQ", "MTR", "NAR", "NPR"}

// Request is the body of POST /batches.
type Request struct {
	BatchReference string           `json:"batchReference"`
	Commodity      string           `json:"commodity"`
	HSCode         string           `json:"hsCode"`
	SupplierID     string           `json:"supplierId"`
	PolygonIDs     []string         `json:"polygonIds"`
	Quantity       *QuantityRequest `json:"quantity"`
	HarvestStart   *string          `json:"harvestStart"`
	HarvestEnd     *string          `json:"harvestEnd"`
}

// QuantityRequest is the quantity of a Request.
type QuantityRequest struct {
	NetMassKg             *euis.Decimal `json:"netMassKg"`
	SupplementaryUnit     *euis.Decimal `json:"supplementaryUnit"`
	SupplementaryUnitType *string       `json:"supplementaryUnitType"`
}

// Validate checks every member and returns the batch to register (without
// IDs, status or times) and its polygon IDs; it returns every problem
// found as one apierr 400. An hsCode that Annex I lists only for another
// commodity is not one of them: that is a business rule, which Register
// judges with the polygons.
func (req *Request) Validate() (*storage.Batch, []string, error) {
	var probs apierr.Problems
	ref := strings.TrimSpace(req.BatchReference)
	switch {
	case ref == "":
		probs.Add(apierr.DetailRequired, "batchReference", "is required: your reference of the batch (lot number, ERP document)")
	case utf8.RuneCountInString(ref) > MaxReferenceLen || strings.ContainsFunc(ref, unicode.IsControl):
		probs.Add(apierr.DetailInvalidValue, "batchReference", fmt.Sprintf("must be at most %d characters, without control characters", MaxReferenceLen))
	}
	commodityOK := false
	switch {
	case req.Commodity == "":
		probs.Add(apierr.DetailRequired, "commodity", "is required: one of "+strings.Join(geo.Commodities(), ", "))
	case !geo.IsCommodity(req.Commodity):
		probs.Add(apierr.DetailInvalidValue, "commodity", fmt.Sprintf("must be one of %s, not %q", strings.Join(geo.Commodities(), ", "), req.Commodity))
	default:
		commodityOK = true
	}
	switch {
	case req.HSCode == "":
		probs.Add(apierr.DetailRequired, "hsCode", "is required: the Harmonised System code of the product (Annex I to Regulation (EU) 2023/1115)")
	case !risk.HSCodePattern.MatchString(req.HSCode):
		probs.Add(apierr.DetailInvalidValue, "hsCode", risk.AnnexI().CheckHSCode(req.Commodity, req.HSCode))
	case len(risk.AnnexI().CommodityOf(req.HSCode)) == 0:
		// No commodity has it: wrong whatever the batch. A code Annex I
		// lists for another commodity is a business rule, judged with the
		// polygons (checkRules).
		issue := fmt.Sprintf("%s is not a product of any commodity in Annex I to Regulation (EU) 2023/1115", req.HSCode)
		if commodityOK {
			issue = risk.AnnexI().CheckHSCode(req.Commodity, req.HSCode)
		}
		probs.Add(apierr.DetailHSCodeNotInAnnexI, "hsCode", issue)
	}
	switch {
	case req.SupplierID == "":
		probs.Add(apierr.DetailRequired, "supplierId", "is required: the erpVendorId of a supplier mapping (POST /suppliers)")
	case !ERPVendorIDPattern.MatchString(req.SupplierID):
		probs.Add(apierr.DetailInvalidValue, "supplierId", "must be an erpVendorId: 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	switch {
	case len(req.PolygonIDs) == 0:
		probs.Add(apierr.DetailRequired, "polygonIds", "is required: the polygonId of at least one COMPLIANT polygon")
	case len(req.PolygonIDs) > MaxPolygons:
		probs.Add(apierr.DetailInvalidValue, "polygonIds", fmt.Sprintf("must list at most %d polygons, not %d", MaxPolygons, len(req.PolygonIDs)))
	default:
		first := make(map[string]int, len(req.PolygonIDs))
		for i, id := range req.PolygonIDs {
			field := fmt.Sprintf("polygonIds[%d]", i)
			if id == "" {
				probs.Add(apierr.DetailInvalidValue, field, "must be a polygonId, not empty")
			} else if j, dup := first[id]; dup {
				probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("repeats polygonIds[%d] %s: list each polygon once", j, id))
			} else {
				first[id] = i
			}
		}
	}
	b := &storage.Batch{Reference: ref, Commodity: req.Commodity, HSCode: req.HSCode, SupplierID: req.SupplierID,
		PolygonCount: len(req.PolygonIDs)}
	if q := req.Quantity; q == nil {
		probs.Add(apierr.DetailRequired, "quantity", "is required: an object with netMassKg")
	} else {
		q.check(&probs, b)
	}
	start, startOK := harvestDate(&probs, "harvestStart", req.HarvestStart)
	end, endOK := harvestDate(&probs, "harvestEnd", req.HarvestEnd)
	if startOK && endOK && start != "" && end != "" && end < start {
		probs.Add(apierr.DetailInvalidValue, "harvestEnd", fmt.Sprintf("must not be before harvestStart (%s)", start))
	}
	b.HarvestStart, b.HarvestEnd = start, end
	if err := probs.Err(); err != nil {
		return nil, nil, err
	}
	return b, req.PolygonIDs, nil
}

// check adds the quantity's problems to probs and its valid members to b.
// The supplementary unit and its type go together.
func (q *QuantityRequest) check(probs *apierr.Problems, b *storage.Batch) {
	switch {
	case q.NetMassKg == nil:
		probs.Add(apierr.DetailRequired, "quantity.netMassKg", "is required: the net mass in kilograms")
	case !q.NetMassKg.Valid():
		probs.Add(apierr.DetailInvalidValue, "quantity.netMassKg", notANumber(*q.NetMassKg))
	case q.NetMassKg.Sign() <= 0 || q.NetMassKg.Cmp(maxQuantity) >= 0:
		probs.Add(apierr.DetailInvalidValue, "quantity.netMassKg", "must be greater than 0 and below 10,000,000,000 kg")
	case q.NetMassKg.FractionDigits() > euis.QuantityFractionDigits:
		probs.Add(apierr.DetailInvalidValue, "quantity.netMassKg", tooPrecise)
	default:
		b.NetMassKg = json.Number(*q.NetMassKg)
	}
	switch {
	case q.SupplementaryUnit == nil && q.SupplementaryUnitType != nil:
		probs.Add(apierr.DetailRequired, "quantity.supplementaryUnit", "is required with supplementaryUnitType")
	case q.SupplementaryUnit != nil && !q.SupplementaryUnit.Valid():
		probs.Add(apierr.DetailInvalidValue, "quantity.supplementaryUnit", notANumber(*q.SupplementaryUnit))
	case q.SupplementaryUnit != nil && (q.SupplementaryUnit.Sign() < 0 || q.SupplementaryUnit.Cmp(maxQuantity) >= 0):
		probs.Add(apierr.DetailInvalidValue, "quantity.supplementaryUnit", "must be at least 0 and below 10,000,000,000")
	case q.SupplementaryUnit != nil && q.SupplementaryUnit.FractionDigits() > euis.QuantityFractionDigits:
		probs.Add(apierr.DetailInvalidValue, "quantity.supplementaryUnit", tooPrecise)
	case q.SupplementaryUnit != nil:
		u := json.Number(*q.SupplementaryUnit)
		b.SupplementaryUnit = &u
	}
	switch t := q.SupplementaryUnitType; {
	case t == nil && q.SupplementaryUnit != nil:
		probs.Add(apierr.DetailRequired, "quantity.supplementaryUnitType", "is required with supplementaryUnit: one of "+strings.Join(SupplementaryUnitTypes, ", "))
	case t != nil && !slices.Contains(SupplementaryUnitTypes, *t):
		probs.Add(apierr.DetailInvalidValue, "quantity.supplementaryUnitType", fmt.Sprintf("must be one of %s, not %q", strings.Join(SupplementaryUnitTypes, ", "), *t))
	case t != nil:
		b.SupplementaryUnitType = *t
	}
}

// harvestDate checks an optional date YYYY-MM-DD; absent (or null) is "".
func harvestDate(probs *apierr.Problems, field string, v *string) (string, bool) {
	if v == nil {
		return "", true
	}
	if _, err := time.Parse(time.DateOnly, *v); err != nil || len(*v) != len(time.DateOnly) {
		probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("must be a date YYYY-MM-DD (ISO 8601), not %q", *v))
		return "", false
	}
	return *v, true
}
