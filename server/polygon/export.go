package polygon

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// ExportFormat is a file GET /polygons/export writes the plots as.
type ExportFormat string

const (
	// ExportGeoJSON is the EU information system's GeoJSON file profile
	// (euis.PlotFeature): a FeatureCollection ready to attach to a
	// statement by hand.
	ExportGeoJSON ExportFormat = "geojson"
	// ExportCSV is a table, one row per plot, its geometry as WKT.
	ExportCSV ExportFormat = "csv"
	// ExportKML is a Placemark per plot, the fields in its ExtendedData.
	ExportKML ExportFormat = "kml"
)

// exportFiles are the media type and file name extension of each format.
var exportFiles = map[ExportFormat]struct{ mediaType, ext string }{
	ExportGeoJSON: {"application/geo+json", "geojson"},
	ExportCSV:     {"text/csv; charset=utf-8", "csv"},
	ExportKML:     {"application/vnd.google-earth.kml+xml", "kml"},
}

// MediaType is the Content-Type of the format's file.
func (f ExportFormat) MediaType() string { return exportFiles[f].mediaType }

// FileName is the name the file is offered under.
func (f ExportFormat) FileName() string { return "polygons." + exportFiles[f].ext }

// CheckExport checks the query of an export before anything is written:
// its format ("" is geojson) and its filter as CheckFilter does, every
// problem as one apierr 400.
func CheckExport(format string, f storage.PolygonFilter) (ExportFormat, error) {
	var probs apierr.Problems
	ef := ExportFormat(format)
	if format == "" {
		ef = ExportGeoJSON
	}
	if _, ok := exportFiles[ef]; !ok {
		probs.Add(apierr.DetailInvalidValue, "query.format", "must be geojson, csv or kml")
	}
	return ef, apierr.Merge(probs, CheckFilter(f))
}

// exportPageSize is how many plots one read transaction takes: an export
// holds one page in memory, never the whole list, and no transaction
// stays open while a slow client reads.
const exportPageSize = 200

// plotWriter writes the plots of one export in its format.
type plotWriter interface {
	begin() error
	plot(p *storage.Polygon, feature json.RawMessage) error
	end() error
}

// Export writes the tenant's polygons that match f to w in format, newest
// first, reading them a page at a time (exportPageSize) and writing each
// page before the next is read, so that memory does not grow with the
// number of plots. A plot recorded while the export runs may be left
// out, one deleted meanwhile is left out. It fails with CheckExport's
// error before writing anything, or with the store's or w's.
func (s *Service) Export(ctx context.Context, t storage.Tenant, f storage.PolygonFilter, format ExportFormat, w io.Writer) error {
	if _, err := CheckExport(string(format), f); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var pw plotWriter
	switch format {
	case ExportCSV:
		pw = newCSVWriter(bw)
	case ExportKML:
		pw = &kmlWriter{w: bw}
	default:
		pw = &geoJSONWriter{w: bw}
	}
	started := false
	page := storage.Page{Limit: exportPageSize}
	for {
		list, features, more, err := s.exportPage(ctx, t, f, page)
		if err != nil {
			return err
		}
		// The first page is read before anything is written, so that a
		// store that cannot be read is an error answer, not a cut file.
		if !started {
			if err := pw.begin(); err != nil {
				return err
			}
			started = true
		}
		for i, p := range list {
			if err := pw.plot(p, features[i]); err != nil {
				return err
			}
		}
		if !more {
			break
		}
		page.After = list[len(list)-1].ID
	}
	if err := pw.end(); err != nil {
		return err
	}
	return bw.Flush()
}

// exportPage reads one page of plots with their stored features.
func (s *Service) exportPage(ctx context.Context, t storage.Tenant, f storage.PolygonFilter, page storage.Page) ([]*storage.Polygon, []json.RawMessage, bool, error) {
	var list []*storage.Polygon
	var features []json.RawMessage
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if list, more, err = tx.FindPolygons(t, f, page); err != nil {
			return err
		}
		features = make([]json.RawMessage, len(list))
		for i, p := range list {
			d, err := tx.FindPolygonDetail(t, p.ID)
			if err != nil {
				return err
			}
			features[i] = d.Feature
		}
		return nil
	})
	return list, features, more, err
}

// geoJSONWriter writes the EU information system's GeoJSON file profile:
// one FeatureCollection of every plot (the "Type II" file of several
// producers, each feature naming its ProducerCountry).
type geoJSONWriter struct {
	w *bufio.Writer
	n int
}

func (g *geoJSONWriter) begin() error {
	_, err := g.w.WriteString(`{"type":"FeatureCollection","features":[`)
	return err
}

func (g *geoJSONWriter) plot(p *storage.Polygon, feature json.RawMessage) error {
	f, err := euis.PlotFeature(feature, euis.PlotProperties{ProducerName: p.ProducerName, ProducerCountry: p.ProducerCountry,
		ProductionPlace: p.ProductionPlace, AreaHa: p.DeclaredAreaHa, Commodity: p.Commodity})
	if err != nil {
		return err
	}
	if g.n > 0 {
		g.w.WriteByte(',')
	}
	g.n++
	g.w.WriteByte('\n')
	_, err = g.w.Write(f)
	return err
}

func (g *geoJSONWriter) end() error {
	_, err := g.w.WriteString("\n]}\n")
	return err
}

// exportColumns are a plot's fields in the CSV export's columns and the
// KML export's ExtendedData, valued as GET /polygons lists them; the risk
// figures are empty for a FAILED plot, which has none. They are named as
// GET /polygons names them but for the areas: the declared one is "area",
// as POST /polygons reads it, and the measured one "measuredAreaHa", a
// name no plot file reader takes for the declared area, so that an export
// posted back declares what was declared.
var exportColumns = []string{"polygonId", "jobId", "externalId", "supplierId", "commodity", "producerCountry", "producerName",
	"productionPlace", "area", "measuredAreaHa", "geometryType", "eudrStatus", "failureReason", "deforestedHa",
	"deforestedPct", "protectedHa", "protectedPct", "riskScore", "screenedAt"}

// freeText are the columns of the text a client wrote, which a
// spreadsheet could take for a formula (csvCell).
var freeText = map[string]bool{"externalId": true, "supplierId": true, "producerName": true, "productionPlace": true}

// exportFields are the values of exportColumns for p.
func exportFields(p *storage.Polygon) []string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	declared := ""
	if p.DeclaredAreaHa != nil {
		declared = num(*p.DeclaredAreaHa)
	}
	risk := make([]string, 5)
	if r := p.Risk; r != nil {
		risk = []string{num(r.DeforestedHa), num(r.DeforestedPct), num(r.ProtectedHa), num(r.ProtectedPct), strconv.Itoa(r.RiskScore)}
	}
	return append([]string{p.ID, p.JobID, p.ExternalID, p.SupplierID, p.Commodity, p.ProducerCountry, p.ProducerName,
		p.ProductionPlace, declared, num(p.AreaHa), p.GeometryType, p.Status, p.FailureReason},
		append(risk, storage.FormatTime(p.ScreenedAt))...)
}
