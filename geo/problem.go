package geo

import (
	"fmt"
	"strings"
)

// Detail codes of the problems ParseFeatureCollection reports: the details
// of the 400 a polygon request gets (docs/screening.md). The server sends
// them as they are.
const (
	CodeRequired                 = "REQUIRED"
	CodeInvalidValue             = "INVALID_VALUE"
	CodeMalformedJSON            = "MALFORMED_JSON"
	CodeInvalidGeometryType      = "INVALID_GEOMETRY_TYPE"
	CodeInvalidCoordinateClosure = "INVALID_COORDINATE_CLOSURE"
	CodeInvalidRing              = "INVALID_RING"
	CodeInvalidCoordinateRange   = "INVALID_COORDINATE_RANGE"
	CodePointAreaTooLarge        = "POINT_AREA_TOO_LARGE"
	// CodeCrossesAntimeridian is a ring with a side joining longitudes
	// more than 180° apart: read the short way, across 180° (RFC 7946,
	// and the geodesic area), it is a small plot; read as plain longitude
	// and latitude (the EU information system, and screening), a band
	// round the globe.
	CodeCrossesAntimeridian = "CROSSES_ANTIMERIDIAN"
	// CodeTooManyProblems is the last problem of a list cut at
	// ParseOptions.MaxProblems; it says how many were left out.
	CodeTooManyProblems = "TOO_MANY_PROBLEMS"
)

// Problem is one thing wrong with the input, at a JSON path such as
// features[3].geometry.coordinates[0][5] ("body" for the request as a whole).
type Problem struct {
	Code  string `json:"code"`
	Path  string `json:"path"`
	Issue string `json:"issue"`
}

func (p Problem) String() string { return p.Path + ": " + p.Code + ": " + p.Issue }

// Problems is every problem found in one input. It is an error; a nil or
// empty Problems is no problem at all (use Err to get a nil error then).
type Problems []Problem

// maxListed is how many problems Error spells out.
const maxListed = 3

func (ps Problems) Error() string {
	switch len(ps) {
	case 0:
		return "no problems"
	case 1:
		return ps[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems: ", len(ps))
	for i, p := range ps {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more", len(ps)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Err returns ps as an error, or nil when there is no problem.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}
