package dds

import (
	"fmt"
	"unicode/utf8"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
)

// DraftRequest is the body of POST /declarations/dds (docs/dds.md).
// Split files a statement over the EU limits as several;
// countryOfActivity and borderCrossCountry default from the shipments'
// port of entry. OperatorRole is OPERATOR (the default) or
// REPRESENTATIVE_OPERATOR: an authorised representative filing for the
// operator whose supplier mapping has operatorUuid (representedRole).
type DraftRequest struct {
	BatchIDs             []string    `json:"batchIds"`
	ActivityType         *string     `json:"activityType"`
	OperatorUUID         *string     `json:"operatorUuid"`
	OperatorRole         *string     `json:"operatorRole"`
	InternalReference    *string     `json:"internalReference"`
	ReferencedStatements []Reference `json:"referencedStatements"`
	CountryOfActivity    *string     `json:"countryOfActivity"`
	BorderCrossCountry   *string     `json:"borderCrossCountry"`
	// SpeciesInfo names the species of each wood batch, by batch ID (the
	// EU system requires them for wood products).
	SpeciesInfo map[string][]Species `json:"speciesInfo"`
	Split       bool                 `json:"split"`
}

// Species is a species of a wood product.
type Species struct {
	ScientificName string `json:"scientificName"`
	CommonName     string `json:"commonName"`
}

// Reference names an earlier statement by its EU numbers.
type Reference struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
}

// MaxBatches bounds a request: each batch is a commodity entry, and the EU
// system takes at most 100 per statement (more need split). The OpenAPI
// document states it too.
const MaxBatches = 1000

// Validate checks the request's own fields; it returns every problem
// found as one apierr 400. Whether its batches can be declared is
// Draft's to say.
func (req *DraftRequest) Validate() error {
	var probs apierr.Problems
	switch n := len(req.BatchIDs); {
	case n == 0:
		probs.Add(apierr.DetailRequired, "batchIds", "must list at least one batch")
	case n > MaxBatches:
		probs.Add(apierr.DetailInvalidValue, "batchIds", fmt.Sprintf("must list at most %d batches", MaxBatches))
	}
	seen := map[string]bool{}
	for i, id := range req.BatchIDs {
		if seen[id] {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("batchIds[%d]", i), "is listed twice")
		}
		seen[id] = true
	}
	switch {
	case req.ActivityType == nil:
		probs.Add(apierr.DetailRequired, "activityType", "is required: IMPORT, EXPORT or DOMESTIC")
	case *req.ActivityType != euis.ActivityImport && *req.ActivityType != euis.ActivityExport && *req.ActivityType != euis.ActivityDomestic:
		probs.Add(apierr.DetailInvalidValue, "activityType", "must be IMPORT, EXPORT or DOMESTIC")
	}
	switch {
	case req.OperatorUUID == nil:
		probs.Add(apierr.DetailRequired, "operatorUuid", "is required: the EU operator UUID the statement is filed for")
	case !euis.IsUUID(*req.OperatorUUID):
		probs.Add(apierr.DetailInvalidValue, "operatorUuid", "must be a UUID")
	}
	if r := req.OperatorRole; r != nil && *r != euis.RoleOperator && *r != euis.RoleRepresentativeOperator {
		probs.Add(apierr.DetailInvalidValue, "operatorRole", "must be OPERATOR or REPRESENTATIVE_OPERATOR")
	}
	if r := req.InternalReference; r != nil && (*r == "" || utf8.RuneCountInString(*r) > euis.MaxInternalReferenceLen) {
		probs.Add(apierr.DetailInvalidValue, "internalReference", fmt.Sprintf("must be 1-%d characters", euis.MaxInternalReferenceLen))
	}
	for i, ref := range req.ReferencedStatements {
		if !euis.IsReferenceNumber(ref.ReferenceNumber) {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("referencedStatements[%d].referenceNumber", i),
				"must be an EU reference number: 14 characters, year, country and 10 letters or digits (26BE7XTVCZAQ2S)")
		}
		if !euis.IsVerificationNumber(ref.VerificationNumber) {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("referencedStatements[%d].verificationNumber", i), "must be 5-35 letters or digits")
		}
	}
	for id, list := range req.SpeciesInfo {
		if !seen[id] {
			probs.Add(apierr.DetailInvalidValue, "speciesInfo."+id, "names a batch that is not in batchIds")
		}
		for i, sp := range list {
			if sp.ScientificName == "" && sp.CommonName == "" {
				probs.Add(apierr.DetailRequired, fmt.Sprintf("speciesInfo.%s[%d]", id, i), "needs a scientificName and a commonName")
			}
		}
	}
	for _, c := range []struct {
		field string
		v     *string
	}{{"countryOfActivity", req.CountryOfActivity}, {"borderCrossCountry", req.BorderCrossCountry}} {
		if c.v != nil && !euis.IsEUCountry(*c.v) {
			probs.Add(apierr.DetailInvalidValue, c.field, "must be an EU member state (ISO 3166-1 alpha-2, or XI)")
		}
	}
	return probs.Err()
}

// role is the operator role the statement is filed in: OperatorRole, or
// OPERATOR.
func (req *DraftRequest) role() string {
	if req.OperatorRole == nil {
		return euis.RoleOperator
	}
	return *req.OperatorRole
}
