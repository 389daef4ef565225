package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketPolygons        = []byte("polygons")
	bucketPolygonFeatures = []byte("polygon_features")
	bucketPolygonEvidence = []byte("polygon_evidence")
)

// Polygon is a screened plot as lists and the status show it. Its geometry
// and evidence, which are large, are kept apart in a PolygonDetail.
type Polygon struct {
	ID              string       `json:"id"` // PolygonID(JobID, FeatureIndex)
	JobID           string       `json:"jobId"`
	FeatureIndex    int          `json:"featureIndex"`
	ExternalID      string       `json:"externalId,omitempty"`
	SupplierID      string       `json:"supplierId,omitempty"`
	Commodity       string       `json:"commodity"`
	ProducerCountry string       `json:"producerCountry"`
	ProducerName    string       `json:"producerName,omitempty"`
	ProductionPlace string       `json:"productionPlace,omitempty"`
	DeclaredAreaHa  *float64     `json:"declaredAreaHa,omitempty"`
	GeometryType    string       `json:"geometryType"`
	AreaHa          float64      `json:"areaHa"`
	Status          string       `json:"status"`
	FailureReason   string       `json:"failureReason,omitempty"`
	FailureDetail   string       `json:"failureDetail,omitempty"`
	Risk            *PolygonRisk `json:"risk,omitempty"`
	ScreenedAt      time.Time    `json:"screenedAt"`
	// LedgerIndex is the entry that anchors the screening in the tenant's
	// ledger log.
	LedgerIndex *int64 `json:"ledgerIndex,omitempty"`
}

// PolygonRisk is a screened plot's measured overlaps and risk score.
type PolygonRisk struct {
	DeforestedHa  float64 `json:"deforestedHa"`
	DeforestedPct float64 `json:"deforestedPct"`
	ProtectedHa   float64 `json:"protectedHa"`
	ProtectedPct  float64 `json:"protectedPct"`
	RiskScore     int     `json:"riskScore"`
}

// PolygonDetail is the rest of a polygon's record: the feature as sent
// (whitespace removed) and the evidence of its screening. Both are stored
// as they are given, byte for byte, since hashes are taken of them.
type PolygonDetail struct {
	Feature  json.RawMessage
	Evidence json.RawMessage
}

// polygonDetailBuckets returns the buckets of the tenant's polygon
// features and evidence (nil in a read-only tx when there are none).
func (tx *Tx) polygonDetailBuckets(t Tenant) (features, evidence *bolt.Bucket, err error) {
	if features, err = tx.tenantBucket(t, bucketPolygonFeatures); err != nil {
		return nil, nil, err
	}
	evidence, err = tx.tenantBucket(t, bucketPolygonEvidence)
	return features, evidence, err
}

// PolygonID is the ID of the polygon made from feature index of job jobID:
// "pol_" + the job's ULID + "_" + the index in six digits. Screening a
// feature again (a job resumed after a crash) writes the same record, and
// a job's polygons sort together, in feature order.
func PolygonID(jobID string, featureIndex int) string {
	return fmt.Sprintf("%s%06d", polygonPrefix(jobID), featureIndex)
}

// polygonPrefix is what the IDs of a job's polygons start with.
func polygonPrefix(jobID string) string {
	_, ulid, _ := strings.Cut(jobID, "_")
	return "pol_" + ulid + "_"
}

// PutPolygon writes a polygon's record and detail, replacing any under the
// same ID, and keeps the counts of SupplierPolygonCounts.
func (tx *Tx) PutPolygon(t Tenant, p *Polygon, d *PolygonDetail) error {
	b, err := tx.tenantBucket(t, bucketPolygons)
	if err != nil {
		return err
	}
	features, evidence, err := tx.polygonDetailBuckets(t)
	if err != nil {
		return err
	}
	var old Polygon
	switch err := getJSON(b, []byte(p.ID), &old); err {
	case nil:
		if err := tx.countSupplierPolygon(t, &old, -1); err != nil {
			return err
		}
	case ErrNotFound:
	default:
		return fmt.Errorf("read polygon %s: %w", p.ID, err)
	}
	if err := tx.countSupplierPolygon(t, p, +1); err != nil {
		return err
	}
	if err := features.Put([]byte(p.ID), d.Feature); err != nil {
		return err
	}
	if err := evidence.Put([]byte(p.ID), d.Evidence); err != nil {
		return err
	}
	return putJSON(b, []byte(p.ID), p)
}

// FindPolygon returns the tenant's polygon or ErrNotFound.
func (tx *Tx) FindPolygon(t Tenant, id string) (*Polygon, error) {
	b, err := tx.tenantBucket(t, bucketPolygons)
	if err != nil {
		return nil, err
	}
	var p Polygon
	if err := getJSON(b, []byte(id), &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// FindPolygonDetail returns the geometry and evidence of the tenant's
// polygon or ErrNotFound.
func (tx *Tx) FindPolygonDetail(t Tenant, id string) (*PolygonDetail, error) {
	features, evidence, err := tx.polygonDetailBuckets(t)
	if err != nil {
		return nil, err
	}
	if features == nil || evidence == nil {
		return nil, ErrNotFound
	}
	f, e := features.Get([]byte(id)), evidence.Get([]byte(id))
	if f == nil || e == nil {
		return nil, ErrNotFound
	}
	return &PolygonDetail{Feature: bytes.Clone(f), Evidence: bytes.Clone(e)}, nil
}

// DeletePolygon removes the tenant's polygon. It returns ErrNotFound for
// none, and a *PolygonInUseError, deleting nothing, while batches use it.
func (tx *Tx) DeletePolygon(t Tenant, id string) error {
	b, err := tx.tenantBucket(t, bucketPolygons)
	if err != nil {
		return err
	}
	var old Polygon
	if err := getJSON(b, []byte(id), &old); err != nil {
		return err
	}
	if err := tx.polygonInUse(t, id); err != nil {
		return err
	}
	if err := tx.countSupplierPolygon(t, &old, -1); err != nil {
		return err
	}
	features, evidence, err := tx.polygonDetailBuckets(t)
	if err != nil {
		return err
	}
	if err := features.Delete([]byte(id)); err != nil {
		return err
	}
	if err := evidence.Delete([]byte(id)); err != nil {
		return err
	}
	return b.Delete([]byte(id))
}

// PolygonFilter selects polygons; an empty field matches any.
type PolygonFilter struct {
	JobID      string
	Status     string
	SupplierID string
	Commodity  string
}

func (f PolygonFilter) match(p *Polygon) bool {
	return (f.JobID == "" || p.JobID == f.JobID) &&
		(f.Status == "" || p.Status == f.Status) &&
		(f.SupplierID == "" || p.SupplierID == f.SupplierID) &&
		(f.Commodity == "" || p.Commodity == f.Commodity)
}

// FindPolygons returns the tenant's polygons that match f, newest job
// first and within a job the last feature first, one page, and whether
// more follow. A job filter reads only that job's polygons; the others are
// checked record by record.
func (tx *Tx) FindPolygons(t Tenant, f PolygonFilter, p Page) ([]*Polygon, bool, error) {
	b, err := tx.tenantBucket(t, bucketPolygons)
	if err != nil || b == nil {
		return nil, false, err
	}
	var prefix []byte
	start := []byte(p.After)
	if f.JobID != "" {
		prefix = []byte(polygonPrefix(f.JobID))
		// Every ID of the job sorts below prefix + 0xff.
		if end := append(bytes.Clone(prefix), 0xff); len(start) == 0 || bytes.Compare(start, end) > 0 {
			start = end
		}
	}
	var out []*Polygon
	c := b.Cursor()
	for k, v := lastBefore(c, start); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		var pol Polygon
		if err := unmarshal(v, &pol); err != nil {
			return nil, false, fmt.Errorf("read polygon %s: %w", k, err)
		}
		if !f.match(&pol) {
			continue
		}
		if len(out) == p.Limit {
			return out, true, nil
		}
		out = append(out, &pol)
	}
	return out, false, nil
}
