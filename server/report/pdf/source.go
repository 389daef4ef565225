package pdf

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/storage"
)

// Source reads what reports are made of, and records the reports made
// in the ledger.
type Source struct {
	DB        *storage.DB
	Ledger    *anchor.Ledger
	Polygons  *polygon.Service
	Layers    *layer.Service
	Batches   *batch.Service
	Shipments *shipment.Service
	DDS       *dds.Service
	// BatchPlotPages is the most plots a batch's report gives a page each;
	// a larger batch lists its plots in a table.
	BatchPlotPages int
}

// plotReport renders the report of the tenant's polygon id (PlotReport):
// its record, evidence with ledger proof, geometry, and the layers of the
// tenant's environment. It fails with apierr.NotFound for a polygon the
// tenant does not have.
func (s Source) plotReport(ctx context.Context, t storage.Tenant, id string) ([]byte, string, error) {
	p, err := s.plot(ctx, t, id)
	if err != nil {
		return nil, "", err
	}
	body, err := PlotReport(ctx, p)
	return body, id, err
}

// plot reads what the report of the tenant's polygon id is made of.
func (s Source) plot(ctx context.Context, t storage.Tenant, id string) (Plot, error) {
	p, geom, err := s.Polygons.FindWithGeometry(ctx, t, id)
	if err != nil {
		return Plot{}, err
	}
	evidence, err := s.Polygons.EvidenceAsFirstSigned(ctx, t, id)
	if err != nil {
		return Plot{}, err
	}
	var ev polygon.Evidence
	if err := json.Unmarshal(evidence, &ev); err != nil {
		return Plot{}, err
	}
	names := map[string]string{}
	for _, l := range ev.Layers {
		names[l.LayerID] = l.Name
	}
	plot := Plot{Polygon: p, Evidence: evidence, Geometry: geom, Rasters: s.Layers.Index(t.Env).Rasters()}
	for _, o := range ev.Overlaps {
		feats, err := s.Layers.FeaturesNamed(ctx, t.Env, o.LayerID, o.FeatureIDs)
		var gone apierr.NotFound
		if errors.As(err, &gone) {
			// A layer deleted since the screening: its overlap is still in
			// the figures, from the evidence; the map cannot draw it.
			continue
		}
		if err != nil {
			return Plot{}, err
		}
		plot.Overlaps = append(plot.Overlaps, VectorOverlap{LayerID: o.LayerID, Name: names[o.LayerID], Kind: o.Kind, Features: feats})
	}
	return plot, nil
}
