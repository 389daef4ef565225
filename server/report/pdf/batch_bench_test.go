package pdf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// patternReader is a synthetic raster whose pixel (col, row) is f(col,
// row): a layer of the size of the real ones with no file under it.
type patternReader struct {
	g geotiff.Georef
	f func(col, row int) uint8
}

func (r patternReader) ReadWindow(_ context.Context, w geotiff.Window, dst []uint8) error {
	for y := range w.Height {
		for x := range w.Width {
			dst[y*w.Width+x] = r.f(w.Col+x, w.Row+y)
		}
	}
	return nil
}

// benchRasters are a forest-2020 and a loss-year layer of 30 m pixels
// (1/4000 degree) over the region of apitest.Plots: forest in patches of
// 300 m, loss in some of them, years spread over 2001-2024.
func benchRasters() []*geo.RasterLayer {
	g := geotiff.Georef{West: -7.5, North: 7.5, DX: 1.0 / 4000, DY: 1.0 / 4000, Width: 8000, Height: 8000}
	hash := func(c, r int) uint32 {
		h := uint32(c/10)*2654435761 ^ uint32(r/10)*2246822519
		return h ^ h>>15
	}
	forest := func(c, r int) uint8 {
		if hash(c, r)%3 != 0 {
			return 1
		}
		return 0
	}
	loss := func(c, r int) uint8 {
		if forest(c, r) == 1 && hash(c+3, r+7)%5 == 0 && (c*7+r*3)%4 == 0 {
			return uint8(1 + hash(c, r)%24)
		}
		return 0
	}
	tile := func(name string, f func(c, r int) uint8) geo.RasterTile {
		return geo.RasterTile{Name: name, Grid: g, Reader: patternReader{g, f}}
	}
	return []*geo.RasterLayer{
		{ID: "lyr_forest", Name: "Forest 2020 (synthetic)", Kind: geo.Forest2020, Version: "v2", Source: "bench", SHA256: strings.Repeat("f0", 32), Tiles: []geo.RasterTile{tile("forest.tif", forest)}},
		{ID: "lyr_loss", Name: "Tree cover loss year (synthetic)", Kind: geo.LossYear, Version: "v1.12", Source: "bench", SHA256: strings.Repeat("e1", 32), Tiles: []geo.RasterTile{tile("loss.tif", loss)}},
	}
}

// realisticBatch is a batch of the first n plots of apitest.Plots (20-200
// corners, 0.5-50 ha, spread over 2 by 2 degrees), each with an evidence
// document as screening records it against benchRasters and a ledger
// entry: one in 7 HIGH_RISK with loss after the cutoff, one in 23 FAILED.
func realisticBatch(tb testing.TB, n, plotPages int) Batch {
	tb.Helper()
	var fc struct {
		Features []struct {
			Geometry   json.RawMessage `json:"geometry"`
			Properties struct {
				Commodity       string `json:"commodity"`
				ProducerCountry string `json:"producerCountry"`
				ExternalID      string `json:"externalId"`
			} `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(apitest.Plots(n), &fc); err != nil {
		tb.Fatal(err)
	}
	rasters := benchRasters()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	b := Batch{PlotPages: plotPages, Batch: &storage.Batch{ID: "bat_01JBENCH0000000000000000000", JobID: "job_01JBENCH0000000000000000000",
		Reference: "LOT-2026-0042", Commodity: "cocoa", HSCode: "180100", SupplierID: "V-100", PolygonCount: n,
		NetMassKg: "24000.5", HarvestStart: "2025-10-01", HarvestEnd: "2026-01-31", Status: storage.BatchVerified, CreatedAt: at}}
	for i, f := range fc.Features {
		id := fmt.Sprintf("pol_01JBENCH00000000000000SCRN_%06d", i) // as a screening job names them
		status := geo.StatusCompliant
		ev := evidenceDoc{Evidence: polygon.Evidence{PolygonID: id, JobID: "job_01JSCREEN", FeatureIndex: i,
			InputSHA256: fmt.Sprintf("%064x", i+1), AreaHa: 0.5 + math.Mod(float64(i)*7.31, 49.5),
			Rules:         polygon.EvidenceRules{MaxRiskScore: 50, LossThresholdPct: 10, LossThresholdHa: 0.5, OverlapThresholdPct: 5, AreaTolerancePct: 10, Cutoff: geo.CutoffDate},
			EngineVersion: geo.EngineVersion, AppVersion: "bench", ScreenedAt: at.Add(-time.Hour).Format(time.RFC3339Nano)},
			Ledger: &anchor.DocumentLedger{Index: int64(i), TransactionHash: leafOf(id), TreeSize: int64(n), RootHash: strings.Repeat("02", 32),
				Proof: []string{strings.Repeat("03", 32), strings.Repeat("04", 32)}, Checkpoint: "eudr/default/sandbox\n" + strconv.Itoa(n) + "\nAAAA\n\n— eudr SIGNATURE=\n"}}
		forestHa := ev.AreaHa * 0.6
		ev.Risk = &polygon.Risk{}
		ev.LossInForest = &polygon.EvidenceLoss{LossLayerID: "lyr_loss"}
		var byYear []polygon.EvidenceYear
		switch {
		case i%23 == 22:
			status = geo.StatusFailed
			reason := geo.ReasonNoReferenceCoverage
			ev.FailureReason = &reason
		case i%7 == 3:
			status = geo.StatusHighRisk
			reason := geo.ReasonDeforestationAfterCutoff
			ev.FailureReason = &reason
			ev.LossInForest.Ha, ev.LossInForest.Pct, ev.LossInForest.Pixels = ev.AreaHa*0.2, 20, int(ev.AreaHa*0.2/0.09)
			ev.Risk.DeforestedHa, ev.Risk.DeforestedPct, ev.Risk.RiskScore = ev.AreaHa*0.2, 20, 80
			byYear = []polygon.EvidenceYear{{Year: 2019, Pixels: 4, Ha: 0.36}, {Year: 2022, Pixels: ev.LossInForest.Pixels, Ha: ev.LossInForest.Ha}}
		}
		ev.EUDRStatus = status
		ev.Rasters = []polygon.EvidenceRaster{
			{LayerID: "lyr_forest", Name: rasters[0].Name, Kind: string(geo.Forest2020), Version: "v2", Source: "bench", SHA256: rasters[0].SHA256, Covered: true, MeasuredHa: forestHa, MeasuredPct: 60},
			{LayerID: "lyr_loss", Name: rasters[1].Name, Kind: string(geo.LossYear), Version: "v1.12", Source: "bench", SHA256: rasters[1].SHA256, Covered: true, LossByYear: byYear},
		}
		body, err := json.Marshal(ev)
		if err != nil {
			tb.Fatal(err)
		}
		p := f.Properties
		b.Plots = append(b.Plots, Plot{Polygon: &storage.Polygon{ID: id, ExternalID: p.ExternalID, ProducerName: "Coopérative " + strconv.Itoa(i%17),
			Commodity: p.Commodity, ProducerCountry: p.ProducerCountry}, Evidence: body, Geometry: f.Geometry, Rasters: rasters})
	}
	return b
}

// leafOf is a made-up leaf hash of plot id's entry.
func leafOf(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// BenchmarkBatchReport renders a batch's report from in-memory records:
// 500 plots (the overview map and a table of plots) and 25 (the overview
// and each plot's pages with its map drawn from 30 m rasters). It reports
// ns/op, bytes allocated, the document's size and the process's peak
// resident memory (VmHWM, Linux). The target for 500 plots: under 10 s
// and 200 MB.
func BenchmarkBatchReport(b *testing.B) {
	for _, tc := range []struct {
		name         string
		n, plotPages int
	}{{"table-500", 500, 25}, {"pages-25", 25, 25}} {
		b.Run(tc.name, func(b *testing.B) {
			batch := realisticBatch(b, tc.n, tc.plotPages)
			runtime.GC()
			os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset VmHWM to now
			b.ReportAllocs()
			b.ResetTimer()
			var size int
			for range b.N {
				out, err := BatchReport(context.Background(), batch)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.StopTimer()
			b.ReportMetric(float64(size)/1e6, "MB-pdf")
			if kb := vmHWM(); kb > 0 {
				b.ReportMetric(float64(kb)/1024, "MiB-peak")
			}
		})
	}
}

// vmHWM is the process's peak resident set in kB, from /proc (0 where
// there is none).
func vmHWM() int {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	return 0
}
