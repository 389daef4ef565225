package polygon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/plotfile"
	"github.com/eudr/eudr/geo/repair"
)

// Repair is a plot file repaired (POST /polygons/repair, POST
// /polygons?repair=true): the repaired FeatureCollection and what was done
// to each feature.
type Repair struct {
	// Collection is the repaired FeatureCollection: each feature as sent
	// (as converted, for a file of another format) with its geometry
	// replaced when it was changed.
	Collection json.RawMessage `json:"collection"`
	// Features is each feature's repair, in order.
	Features []FeatureRepair `json:"features"`
}

// FeatureRepair is what a repair did to one feature. A polygon screened
// from a repaired file records it in its evidence.
type FeatureRepair struct {
	FeatureIndex int `json:"featureIndex"`
	// OriginalSHA256 is the hex SHA-256 of the feature as sent, with the
	// whitespace between JSON tokens removed: the inputSha256 its
	// evidence would have without the repair.
	OriginalSHA256 string `json:"originalSha256"`
	// Changes is every change made, in order; empty when none was needed.
	Changes []repair.Change `json:"changes"`
	// Unrepaired says why the feature could not be repaired safely; it is
	// left as sent (its open rings closed) and fails screening with that
	// reason. Null when it passes the appliance's geometry check.
	Unrepaired *repair.Unrepaired `json:"unrepaired"`
}

// Counts are how many features a repair changed and left.
func (r *Repair) Counts() (changed, unrepaired int) {
	for _, f := range r.Features {
		if len(f.Changes) > 0 {
			changed++
		}
		if f.Unrepaired != nil {
			unrepaired++
		}
	}
	return changed, unrepaired
}

// Repair reads a plot file as Check does (the same formats, limits and
// errors), but leniently where a repair can help: a ring need not be
// closed, and a ring across the antimeridian is reported per feature
// rather than refused. It repairs each feature (geo/repair) and stores
// nothing.
func (s *Service) Repair(body []byte, f plotfile.Format, sheet string) (*Repair, error) {
	var feats []geo.Feature
	if _, err := s.read(body, f, sheet, geo.ParseOptions{OpenRings: true, DeferAntimeridian: true,
		Each: func(f geo.Feature) error { feats = append(feats, f); return nil }}); err != nil {
		return nil, err
	}
	out := &Repair{Features: make([]FeatureRepair, len(feats))}
	var coll bytes.Buffer
	coll.WriteString(`{"type":"FeatureCollection","features":[`)
	for i, f := range feats {
		res := repair.Feature(f)
		out.Features[i] = FeatureRepair{FeatureIndex: f.Index, OriginalSHA256: featureSHA256(f.Raw),
			Changes: res.Changes, Unrepaired: res.Unrepaired}
		if i > 0 {
			coll.WriteByte(',')
		}
		feature, err := withGeometry(f.Raw, res)
		if err != nil {
			return nil, err
		}
		coll.Write(feature)
	}
	coll.WriteString(`]}`)
	out.Collection = coll.Bytes()
	return out, nil
}

// CheckRepaired repairs a POST /polygons?repair=true body as Repair does
// and readies the repaired collection to be queued; the job records each
// feature's repair in its evidence.
func (s *Service) CheckRepaired(body []byte, f plotfile.Format, sheet string) (*Submission, *Repair, error) {
	r, err := s.Repair(body, f, sheet)
	if err != nil {
		return nil, nil, err
	}
	repairs, err := json.Marshal(r.Features)
	if err != nil {
		return nil, nil, fmt.Errorf("encode repairs: %w", err)
	}
	input := make([]byte, 0, len(repairedMarker)+len(repairs)+1+len(r.Collection))
	input = append(input, repairedMarker...)
	input = append(append(input, repairs...), '\n')
	input = append(input, r.Collection...)
	return &Submission{body: input, features: len(r.Features)}, r, nil
}

// repairedMarker starts the queued input of a repaired collection,
// followed by its repairs (JSON, one line) and the collection. No body a
// client sends can start so (a FeatureCollection starts with "{" or
// whitespace), so only the appliance's own repairs reach the evidence.
const repairedMarker = "\x00repaired\n"

// splitRepaired splits a job's input into its repairs (nil for a body
// queued without repair) and the collection to screen.
func splitRepaired(input []byte) (map[int]*FeatureRepair, []byte, error) {
	rest, ok := bytes.CutPrefix(input, []byte(repairedMarker))
	if !ok {
		return nil, input, nil
	}
	line, coll, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return nil, nil, fmt.Errorf("a repaired job input without its collection")
	}
	var list []FeatureRepair
	if err := json.Unmarshal(line, &list); err != nil {
		return nil, nil, fmt.Errorf("read the repairs of a job: %w", err)
	}
	byIndex := make(map[int]*FeatureRepair, len(list))
	for i := range list {
		byIndex[list[i].FeatureIndex] = &list[i]
	}
	return byIndex, coll, nil
}

// featureSHA256 is the hex SHA-256 of a feature as sent, compacted, as
// its evidence's inputSha256 is made.
func featureSHA256(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		b.Reset()
		b.Write(raw) // not reached: the parser accepted it as JSON
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// withGeometry returns a feature with its geometry replaced by a repair's,
// or as it is when the repair changed nothing. Its members are kept (in
// the order of their names).
func withGeometry(raw json.RawMessage, res repair.Result) ([]byte, error) {
	if len(res.Changes) == 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("compact feature: %w", err)
		}
		return b.Bytes(), nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, fmt.Errorf("read feature: %w", err)
	}
	members["geometry"] = res.WriteGeometry()
	return json.Marshal(members)
}
