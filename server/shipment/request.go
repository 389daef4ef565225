package shipment

import (
	"fmt"
	"regexp"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Patterns of a link request's fields (the OpenAPI document states them
// too).
var (
	// IDPattern keeps shipment IDs usable as a URL path segment.
	IDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// ContainerPattern is an ISO 6346 container number: owner code,
	// category letter, six digits and a check digit.
	ContainerPattern = regexp.MustCompile(`^[A-Z]{3}[UJZ][0-9]{7}$`)
	// UNLOCODEPattern is a UN/LOCODE: country code and three letters or digits 2-9.
	UNLOCODEPattern = regexp.MustCompile(`^[A-Z]{2}[A-Z2-9]{3}$`)
)

// Limits of a link request (the OpenAPI document states them too).
const (
	MaxBillOfLadingLen = 64
	MaxContainers      = 1000
)

// LinkRequest is the body of POST /shipments/link.
type LinkRequest struct {
	BatchID          *string  `json:"batchId"`
	ShipmentID       *string  `json:"shipmentId"`
	BillOfLading     *string  `json:"billOfLading"`
	ContainerNumbers []string `json:"containerNumbers"`
	PortOfEntry      *string  `json:"portOfEntry"`
	ETA              *string  `json:"eta"`
}

// Validate checks the request and makes the link it asks for; it returns
// every problem found as one apierr 400.
func (req *LinkRequest) Validate() (*storage.ShipmentLink, error) {
	var probs apierr.Problems
	l := &storage.ShipmentLink{}
	switch {
	case req.BatchID == nil || *req.BatchID == "":
		probs.Add(apierr.DetailRequired, "batchId", "is required")
	default:
		l.BatchID = *req.BatchID
	}
	switch {
	case req.ShipmentID == nil || *req.ShipmentID == "":
		probs.Add(apierr.DetailRequired, "shipmentId", "is required")
	case !IDPattern.MatchString(*req.ShipmentID):
		probs.Add(apierr.DetailInvalidValue, "shipmentId", "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	default:
		l.ShipmentID = *req.ShipmentID
	}
	if b := req.BillOfLading; b != nil {
		if *b == "" || len(*b) > MaxBillOfLadingLen {
			probs.Add(apierr.DetailInvalidValue, "billOfLading", fmt.Sprintf("must be 1-%d characters", MaxBillOfLadingLen))
		}
		l.BillOfLading = *b
	}
	if len(req.ContainerNumbers) > MaxContainers {
		probs.Add(apierr.DetailInvalidValue, "containerNumbers", fmt.Sprintf("must list at most %d containers", MaxContainers))
	}
	seen := map[string]bool{}
	for i, c := range req.ContainerNumbers {
		field := fmt.Sprintf("containerNumbers[%d]", i)
		switch {
		case !ValidContainerNumber(c):
			probs.Add(apierr.DetailInvalidValue, field, "must be an ISO 6346 container number (e.g. MSCU1234566) with a valid check digit")
		case seen[c]:
			probs.Add(apierr.DetailInvalidValue, field, "is listed twice")
		}
		seen[c] = true
	}
	l.ContainerNumbers = req.ContainerNumbers
	if p := req.PortOfEntry; p != nil {
		if !UNLOCODEPattern.MatchString(*p) {
			probs.Add(apierr.DetailInvalidValue, "portOfEntry", "must be a UN/LOCODE such as NLRTM")
		}
		l.PortOfEntry = *p
	}
	if e := req.ETA; e != nil {
		if _, err := time.Parse(time.DateOnly, *e); err != nil {
			if _, err := time.Parse(time.RFC3339, *e); err != nil {
				probs.Add(apierr.DetailInvalidValue, "eta", "must be a date (YYYY-MM-DD) or an RFC 3339 date-time")
			}
		}
		l.ETA = *e
	}
	return l, probs.Err()
}

// ValidContainerNumber reports whether c is an ISO 6346 container number
// with a valid check digit.
func ValidContainerNumber(c string) bool {
	if !ContainerPattern.MatchString(c) {
		return false
	}
	sum := 0
	for i := range 10 {
		var v int
		ch := c[i]
		if ch >= '0' && ch <= '9' {
			v = int(ch - '0')
		} else {
			// Letters count 10 upwards, skipping multiples of 11.
			v = 10 + int(ch-'A')
			v += (v - 1) / 10
		}
		sum += v << i
	}
	return sum%11%10 == int(c[10]-'0')
}
