package polygon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// CheckFilter checks the enumerated fields of a list filter, so that a
// misspelt value is an error rather than an empty list: it returns every
// problem as one apierr 400, with the query parameters' names as fields.
func CheckFilter(f storage.PolygonFilter) error {
	var probs apierr.Problems
	switch f.Status {
	case "", geo.StatusCompliant, geo.StatusHighRisk, geo.StatusFailed:
	default:
		probs.Add(apierr.DetailInvalidValue, "query.eudrStatus", "must be COMPLIANT, HIGH_RISK or FAILED")
	}
	if f.Commodity != "" && !geo.IsCommodity(f.Commodity) {
		probs.Add(apierr.DetailInvalidValue, "query.commodity", "must be one of cattle, cocoa, coffee, oil_palm, soya, wood, rubber")
	}
	return probs.Err()
}

// CheckList checks a list's filter as CheckFilter does, and its include
// query parameter: "" or "geometry" (each item then carries its geometry,
// so a map takes a request per page, not one per plot).
func CheckList(f storage.PolygonFilter, include string) error {
	var probs apierr.Problems
	if include != "" && include != "geometry" {
		probs.Add(apierr.DetailInvalidValue, "query.include", "must be geometry")
	}
	return apierr.Merge(probs, CheckFilter(f))
}

// List returns one page of the tenant's polygons that match f, newest
// first, the geometry of each as sent (read in the same transaction, what
// a map of a page needs; nil each without withGeometry), and whether more
// follow. It fails with CheckFilter's error for a bad filter, or when the
// store does.
func (s *Service) List(ctx context.Context, t storage.Tenant, f storage.PolygonFilter, page storage.Page, withGeometry bool) ([]*storage.Polygon, []json.RawMessage, bool, error) {
	if err := CheckFilter(f); err != nil {
		return nil, nil, false, err
	}
	var list []*storage.Polygon
	var geoms []json.RawMessage
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if list, more, err = tx.FindPolygons(t, f, page); err != nil {
			return err
		}
		geoms = make([]json.RawMessage, len(list))
		if !withGeometry {
			return nil
		}
		for i, p := range list {
			d, err := tx.FindPolygonDetail(t, p.ID)
			if err != nil {
				return err
			}
			if geoms[i], err = geometryOf(p.ID, d); err != nil {
				return err
			}
		}
		return nil
	})
	return list, geoms, more, err
}

// geometryOf is the geometry member of a polygon's stored feature.
func geometryOf(id string, d *storage.PolygonDetail) (json.RawMessage, error) {
	var f struct {
		Geometry json.RawMessage `json:"geometry"`
	}
	if err := json.Unmarshal(d.Feature, &f); err != nil {
		return nil, fmt.Errorf("polygon %s: stored feature: %w", id, err)
	}
	return f.Geometry, nil
}

// Find returns the tenant's polygon, or apierr.NotFound.
func (s *Service) Find(ctx context.Context, t storage.Tenant, id string) (*storage.Polygon, error) {
	var p *storage.Polygon
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		p, err = tx.FindPolygon(t, id)
		return err
	})
	return p, apierr.Named(err, "polygon", id)
}

// FindWithGeometry returns the tenant's polygon and the geometry of its
// feature as sent, or apierr.NotFound; an internal error when the stored
// feature cannot be decoded.
func (s *Service) FindWithGeometry(ctx context.Context, t storage.Tenant, id string) (*storage.Polygon, json.RawMessage, error) {
	var p *storage.Polygon
	var d *storage.PolygonDetail
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if p, err = tx.FindPolygon(t, id); err != nil {
			return err
		}
		d, err = tx.FindPolygonDetail(t, id)
		return err
	})
	if err != nil {
		return nil, nil, apierr.Named(err, "polygon", id)
	}
	geom, err := geometryOf(id, d)
	if err != nil {
		return nil, nil, err
	}
	return p, geom, nil
}

// Evidence returns the evidence document recorded when the polygon was
// screened, byte for byte, with its ledger entry and its proof in the
// latest checkpoint added as a "ledger" member (anchor.WithProof); or
// apierr.NotFound.
func (s *Service) Evidence(ctx context.Context, t storage.Tenant, id string) ([]byte, error) {
	return s.evidence(ctx, t, id, anchor.WithProof)
}

// EvidenceAsFirstSigned is Evidence with the proof made in the first
// checkpoint that covers the entry (anchor.WithFirstProof): the same bytes
// however the ledger grows, for a report whose SHA-256 is kept.
func (s *Service) EvidenceAsFirstSigned(ctx context.Context, t storage.Tenant, id string) ([]byte, error) {
	return s.evidence(ctx, t, id, anchor.WithFirstProof)
}

func (s *Service) evidence(ctx context.Context, t storage.Tenant, id string,
	prove func(*storage.Tx, storage.Tenant, []byte, *int64) ([]byte, error)) ([]byte, error) {
	var body []byte
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		p, err := tx.FindPolygon(t, id)
		if err != nil {
			return err
		}
		d, err := tx.FindPolygonDetail(t, id)
		if err != nil {
			return err
		}
		body, err = prove(tx, t, d.Evidence, p.LedgerIndex)
		return err
	})
	return body, apierr.Named(err, "polygon", id)
}

// Delete deletes the tenant's polygon with its feature and evidence (its
// ledger entry stays), in the caller's transaction. It writes nothing
// when it refuses: apierr.NotFound, or a 409 POLYGON_IN_USE naming the
// batches that use it.
func (s *Service) Delete(tx *storage.Tx, t storage.Tenant, id string) error {
	err := tx.DeletePolygon(t, id)
	var inUse *storage.PolygonInUseError
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierr.NotFound{Kind: "polygon", ID: id}
	case errors.As(err, &inUse):
		return apierr.Conflict(apierr.DetailPolygonInUse, "polygonId", fmt.Sprintf(
			"polygon %s is used by batch %s: a polygon in a batch cannot be deleted", id, strings.Join(inUse.BatchIDs, ", ")))
	}
	return err
}

// FilterOf is the list filter a query names (jobId, eudrStatus,
// supplierId, commodity), for GET /polygons and its export alike.
func FilterOf(q url.Values) storage.PolygonFilter {
	return storage.PolygonFilter{JobID: q.Get("jobId"), Status: q.Get("eudrStatus"),
		SupplierID: q.Get("supplierId"), Commodity: q.Get("commodity")}
}
