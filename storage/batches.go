package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

var (
	bucketBatches           = []byte("batches")
	bucketBatchPolygons     = []byte("batch_polygons")
	bucketBatchAssessments  = []byte("batch_assessments")
	bucketPolygonBatches    = []byte("polygon_batches")
	bucketSupplierPlotStats = []byte("supplier_polygon_stats")
)

// Batch statuses (docs/batches.md).
const (
	BatchAssessing = "ASSESSING"
	BatchVerified  = "VERIFIED"
	BatchHighRisk  = "HIGH_RISK"
)

// Batch is a registered batch of a product made from screened plots. Its
// polygon IDs, which may be many, are kept apart (FindBatchPolygons), and
// so is its risk assessment once made (FindBatchAssessment).
type Batch struct {
	ID           string `json:"id"` // bat_ + ULID: time-ordered
	JobID        string `json:"jobId"`
	Reference    string `json:"reference"`
	Commodity    string `json:"commodity"`
	HSCode       string `json:"hsCode"`
	SupplierID   string `json:"supplierId"` // the ERP vendor ID of a supplier mapping
	PolygonCount int    `json:"polygonCount"`
	// NetMassKg, SupplementaryUnit and SupplementaryUnitType are the
	// quantity; the unit and its type go together. Quantities are kept as
	// the decimal text they were given in (a float64 would change the
	// 16th digit the EU system takes).
	NetMassKg             json.Number  `json:"netMassKg"`
	SupplementaryUnit     *json.Number `json:"supplementaryUnit,omitempty"`
	SupplementaryUnitType string       `json:"supplementaryUnitType,omitempty"`
	HarvestStart          string       `json:"harvestStart,omitempty"` // YYYY-MM-DD
	HarvestEnd            string       `json:"harvestEnd,omitempty"`
	Status                string       `json:"status"`
	RiskScore             *int         `json:"riskScore,omitempty"`
	RiskLevel             string       `json:"riskLevel,omitempty"`
	CreatedAt             time.Time    `json:"createdAt"`
	AssessedAt            *time.Time   `json:"assessedAt,omitempty"`
}

// PolygonInUseError is returned by DeletePolygon for a polygon that
// batches reference.
type PolygonInUseError struct {
	PolygonID string
	BatchIDs  []string // sorted: oldest batch first
}

func (e *PolygonInUseError) Error() string {
	return fmt.Sprintf("polygon %s is used by batch %s", e.PolygonID, strings.Join(e.BatchIDs, ", "))
}

// PutBatch writes the tenant's batch record, replacing any under its ID.
func (tx *Tx) PutBatch(t Tenant, b *Batch) error {
	bk, err := tx.tenantBucket(t, bucketBatches)
	if err != nil {
		return err
	}
	return putJSON(bk, []byte(b.ID), b)
}

// FindBatch returns the tenant's batch or ErrNotFound.
func (tx *Tx) FindBatch(t Tenant, id string) (*Batch, error) {
	bk, err := tx.tenantBucket(t, bucketBatches)
	if err != nil {
		return nil, err
	}
	var b Batch
	if err := getJSON(bk, []byte(id), &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// polygonBatchKey is the index entry of polygon used by batch: the polygon
// ID, a zero byte, the batch ID.
func polygonBatchKey(polygonID, batchID string) []byte {
	k := make([]byte, 0, len(polygonID)+1+len(batchID))
	k = append(k, polygonID...)
	k = append(k, 0)
	return append(k, batchID...)
}

// PutBatchPolygons records the polygons of a batch, in the order given, and
// indexes each as used by the batch, so that it cannot be deleted.
func (tx *Tx) PutBatchPolygons(t Tenant, batchID string, polygonIDs []string) error {
	list, err := tx.tenantBucket(t, bucketBatchPolygons)
	if err != nil {
		return err
	}
	index, err := tx.tenantBucket(t, bucketPolygonBatches)
	if err != nil {
		return err
	}
	for _, id := range polygonIDs {
		if err := index.Put(polygonBatchKey(id, batchID), []byte{}); err != nil {
			return err
		}
	}
	return putJSON(list, []byte(batchID), polygonIDs)
}

// FindBatchPolygons returns the polygon IDs of the tenant's batch in the
// order they were given, or ErrNotFound.
func (tx *Tx) FindBatchPolygons(t Tenant, batchID string) ([]string, error) {
	list, err := tx.tenantBucket(t, bucketBatchPolygons)
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := getJSON(list, []byte(batchID), &ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// PolygonBatches returns the IDs of the tenant's batches that use a
// polygon, oldest first; none when it is used by no batch.
func (tx *Tx) PolygonBatches(t Tenant, polygonID string) ([]string, error) {
	index, err := tx.tenantBucket(t, bucketPolygonBatches)
	if err != nil || index == nil {
		return nil, err
	}
	prefix := polygonBatchKey(polygonID, "")
	var out []string
	c := index.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		out = append(out, string(k[len(prefix):]))
	}
	return out, nil
}

// PutBatchAssessment records the risk assessment of a batch, a JSON
// document kept byte for byte.
func (tx *Tx) PutBatchAssessment(t Tenant, batchID string, doc json.RawMessage) error {
	bk, err := tx.tenantBucket(t, bucketBatchAssessments)
	if err != nil {
		return err
	}
	return bk.Put([]byte(batchID), doc)
}

// FindBatchAssessment returns the recorded risk assessment of a batch, or
// ErrNotFound while there is none.
func (tx *Tx) FindBatchAssessment(t Tenant, batchID string) (json.RawMessage, error) {
	bk, err := tx.tenantBucket(t, bucketBatchAssessments)
	if err != nil {
		return nil, err
	}
	var v []byte
	if bk != nil {
		v = bk.Get([]byte(batchID))
	}
	if v == nil {
		return nil, ErrNotFound
	}
	return bytes.Clone(v), nil
}

// BatchFilter selects batches; an empty field matches any.
type BatchFilter struct {
	Status     string
	SupplierID string
}

func (f BatchFilter) match(b *Batch) bool {
	return (f.Status == "" || b.Status == f.Status) && (f.SupplierID == "" || b.SupplierID == f.SupplierID)
}

// FindBatches returns the tenant's batches that match f, newest first, one
// page, and whether more follow.
func (tx *Tx) FindBatches(t Tenant, f BatchFilter, p Page) ([]*Batch, bool, error) {
	bk, err := tx.tenantBucket(t, bucketBatches)
	if err != nil || bk == nil {
		return nil, false, err
	}
	var out []*Batch
	c := bk.Cursor()
	for k, v := lastBefore(c, []byte(p.After)); k != nil; k, v = c.Prev() {
		var b Batch
		if err := unmarshal(v, &b); err != nil {
			return nil, false, fmt.Errorf("read batch %s: %w", k, err)
		}
		if !f.match(&b) {
			continue
		}
		if len(out) == p.Limit {
			return out, true, nil
		}
		out = append(out, &b)
	}
	return out, false, nil
}

// StatusCounts counts polygons by status (COMPLIANT, HIGH_RISK, FAILED).
type StatusCounts map[string]int

// SupplierPolygonCounts returns how many of the tenant's polygons whose
// supplierId is erpVendorID there are of each status. It is kept up to
// date by PutPolygon and DeletePolygon.
func (tx *Tx) SupplierPolygonCounts(t Tenant, erpVendorID string) (StatusCounts, error) {
	bk, err := tx.tenantBucket(t, bucketSupplierPlotStats)
	if err != nil {
		return nil, err
	}
	counts := StatusCounts{}
	if err := getJSON(bk, []byte(erpVendorID), &counts); err != nil && err != ErrNotFound {
		return nil, fmt.Errorf("read polygon counts of supplier %s: %w", erpVendorID, err)
	}
	return counts, nil
}

// countSupplierPolygon adds delta to the count of a polygon's supplier and
// status; polygons without a supplier are not counted.
func (tx *Tx) countSupplierPolygon(t Tenant, p *Polygon, delta int) error {
	if p.SupplierID == "" {
		return nil
	}
	bk, err := tx.tenantBucket(t, bucketSupplierPlotStats)
	if err != nil {
		return err
	}
	counts, err := tx.SupplierPolygonCounts(t, p.SupplierID)
	if err != nil {
		return err
	}
	counts[p.Status] = max(0, counts[p.Status]+delta)
	if counts[p.Status] == 0 {
		delete(counts, p.Status)
	}
	if len(counts) == 0 {
		return bk.Delete([]byte(p.SupplierID))
	}
	return putJSON(bk, []byte(p.SupplierID), counts)
}

// polygonInUse returns a PolygonInUseError when batches use the polygon.
func (tx *Tx) polygonInUse(t Tenant, id string) error {
	batches, err := tx.PolygonBatches(t, id)
	if err != nil {
		return err
	}
	if len(batches) > 0 {
		return &PolygonInUseError{PolygonID: id, BatchIDs: batches}
	}
	return nil
}
