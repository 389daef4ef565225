package geo_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
)

// Hectares by hand. All test plots lie within 0.03° of (0, 0), where a
// degree-square cell is as near uniform as matters here:
//
//	width  of 0.01° of longitude on the equator: a·Δλ
//	       = 6378137 m · 0.01·π/180               = 1113.1949 m
//	height of 0.01° of latitude from the equator: a(1-e²)·Δφ (meridian
//	       radius of curvature at φ = 0, which grows by 1.5e²sin²φ ≈ 3e-8)
//	       = 6378137 m · (1 - 0.0066943800) · 0.01·π/180 = 1105.7428 m
//	cell   = 1113.1949 m · 1105.7428 m = 1,230,907 m² = 123.0907 ha
//
// so a region of k square centidegrees (0.01° × 0.01°) is k · 123.0907 ha,
// to about 1e-6 relative (cos φ ≥ 1 - 1.4e-7; the northern edge being a
// geodesic rather than a parallel adds less still).
const cellHa = 123.0907

// box returns the rectangle [lon0, lon1] × [lat0, lat1], counter-clockwise.
func box(lon0, lat0, lon1, lat1 float64) geo.Polygon {
	return geo.Polygon{geo.Ring{{lon0, lat0}, {lon1, lat0}, {lon1, lat1}, {lon0, lat1}, {lon0, lat0}}}
}

// c converts centidegrees to degrees, so boxes read in cells.
func c(v float64) float64 { return v / 100 }

func cbox(lon0, lat0, lon1, lat1 float64) geo.Polygon {
	return box(c(lon0), c(lat0), c(lon1), c(lat1))
}

func polygon(ps ...geo.Polygon) geo.Geometry {
	if len(ps) == 1 {
		return geo.Geometry{Type: geo.TypePolygon, Polygons: ps}
	}
	return geo.Geometry{Type: geo.TypeMultiPolygon, Polygons: ps}
}

func lfeature(id string, ps ...geo.Polygon) geo.LayerFeature {
	return geo.LayerFeature{ID: id, Polygons: ps}
}

// deforestation returns a deforestation layer covering [-1°, 1°]².
func deforestation(fs ...geo.LayerFeature) *geo.Layer {
	return &geo.Layer{
		ID: "defo", Name: "test", Kind: geo.DeforestationAfterCutoff, Version: "1",
		Coverage: []geo.Polygon{box(-1, -1, 1, 1)},
		Features: fs,
	}
}

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

func TestIndex_Screen_Overlap(t *testing.T) {
	// An L-shaped (non-convex) plot: the cell [0,1]² less its north-east
	// quarter [0.5,1]², 0.75 cells.
	ell := geo.Polygon{geo.Ring{{0, 0}, {c(1), 0}, {c(1), c(0.5)}, {c(0.5), c(0.5)}, {c(0.5), c(1)}, {0, c(1)}, {0, 0}}}
	// A cell with a hole [0.2,0.8]².
	holed := geo.Polygon{cbox(0, 0, 1, 1)[0], cbox(0.2, 0.2, 0.8, 0.8)[0]}

	tests := []struct {
		name     string
		plot     geo.Geometry
		features []geo.LayerFeature
		plotHa   float64 // cells · cellHa
		wantHa   float64
		wantPct  float64
		wantIDs  []string
	}{{
		// [0.2,0.8]² = 0.36 cells, all inside the feature [0,1]².
		name: "inside", plot: polygon(cbox(0.2, 0.2, 0.8, 0.8)),
		features: []geo.LayerFeature{lfeature("f", cbox(0, 0, 1, 1))},
		plotHa:   0.36 * cellHa, wantHa: 0.36 * cellHa, wantPct: 100, wantIDs: []string{"f"},
	}, {
		// [0,1]² against [0.5,2]×[-1,2]: the eastern half, 0.5 cells.
		name: "half", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("f", cbox(0.5, -1, 2, 2))},
		plotHa:   cellHa, wantHa: 0.5 * cellHa, wantPct: 50, wantIDs: []string{"f"},
	}, {
		// A diamond (0.5 cells) inside a larger diamond that does not hold
		// its bounding box: measured by clipping, not the shortcut.
		name: "inside, not its box", plot: polygon(geo.Polygon{geo.Ring{{c(0.5), 0}, {c(1), c(0.5)}, {c(0.5), c(1)}, {0, c(0.5)}, {c(0.5), 0}}}),
		features: []geo.LayerFeature{lfeature("f", geo.Polygon{geo.Ring{{c(0.5), c(-0.1)}, {c(1.1), c(0.5)}, {c(0.5), c(1.1)}, {c(-0.1), c(0.5)}, {c(0.5), c(-0.1)}}})},
		plotHa:   0.5 * cellHa, wantHa: 0.5 * cellHa, wantPct: 100, wantIDs: []string{"f"},
	}, {
		name: "disjoint", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("f", cbox(2, 2, 3, 3))},
		plotHa:   cellHa,
	}, {
		// Shares the edge lon = 0.01° from lat 0 to 0.01°: a line, 0 ha.
		name: "touching edge", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("f", cbox(1, 0, 2, 1))},
		plotHa:   cellHa,
	}, {
		// Shares only the corner (0.01°, 0.01°).
		name: "touching corner", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("f", cbox(1, 1, 2, 2))},
		plotHa:   cellHa,
	}, {
		// Two disjoint features: [0,0.3]×[0,1] and [0.7,1]×[0,1] of [0,1]²:
		// 0.3 + 0.3 = 0.6 cells.
		name: "two features", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("a", cbox(-1, -1, 0.3, 2)), lfeature("b", cbox(0.7, -1, 2, 2))},
		plotHa:   cellHa, wantHa: 0.6 * cellHa, wantPct: 60, wantIDs: []string{"a", "b"},
	}, {
		// Features overlapping each other: [0,0.6] and [0.4,1] (by
		// longitude) cover [0,1]² once, 1 cell, not 1.2.
		name: "overlapping features", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("b", cbox(0.4, -1, 2, 2)), lfeature("a", cbox(-1, -1, 0.6, 2))},
		plotHa:   cellHa, wantHa: cellHa, wantPct: 100, wantIDs: []string{"a", "b"},
	}, {
		// One feature whose two parts overlap each other: [0,0.5] ∪ [0.25,0.5]
		// by longitude = 0.5 cells.
		name: "overlapping parts", plot: polygon(cbox(0, 0, 1, 1)),
		features: []geo.LayerFeature{lfeature("f", cbox(-1, -1, 0.5, 2), cbox(0.25, -1, 0.5, 2))},
		plotHa:   cellHa, wantHa: 0.5 * cellHa, wantPct: 50, wantIDs: []string{"f"},
	}, {
		// The L against [0.4,2]²: [0.4,1]×[0.4,0.5] (0.06) + [0.4,0.5]×[0.5,1]
		// (0.05) = 0.11 cells of 0.75: 14.667 %.
		name: "non-convex plot", plot: polygon(ell),
		features: []geo.LayerFeature{lfeature("f", cbox(0.4, 0.4, 2, 2))},
		plotHa:   0.75 * cellHa, wantHa: 0.11 * cellHa, wantPct: 100 * 0.11 / 0.75, wantIDs: []string{"f"},
	}, {
		// [0.3,0.7]² sits in the hole [0.2,0.8]²: 0.
		name: "in a hole", plot: polygon(cbox(0.3, 0.3, 0.7, 0.7)),
		features: []geo.LayerFeature{lfeature("f", holed)},
		plotHa:   0.16 * cellHa,
	}, {
		// [0.1,0.3]×[0.4,0.6] straddles the hole's western edge at 0.2:
		// [0.1,0.2]×[0.4,0.6] = 0.02 cells of 0.04 overlap.
		name: "across a hole's edge", plot: polygon(cbox(0.1, 0.4, 0.3, 0.6)),
		features: []geo.LayerFeature{lfeature("f", holed)},
		plotHa:   0.04 * cellHa, wantHa: 0.02 * cellHa, wantPct: 50, wantIDs: []string{"f"},
	}, {
		// A MultiPolygon plot [0,1]² ∪ [0.5,1.5]×[0,1] overlapping itself:
		// 1.5 cells, of which [0.5,2]×.. takes [0.5,1.5] = 1 cell.
		name: "multipolygon overlapping itself", plot: polygon(cbox(0, 0, 1, 1), cbox(0.5, 0, 1.5, 1)),
		features: []geo.LayerFeature{lfeature("f", cbox(0.5, -1, 2, 2))},
		plotHa:   1.5 * cellHa, wantHa: cellHa, wantPct: 100 / 1.5, wantIDs: []string{"f"},
	}, {
		// Clockwise plot: winding does not matter.
		name: "clockwise", plot: polygon(geo.Polygon{geo.Ring{{0, 0}, {0, c(1)}, {c(1), c(1)}, {c(1), 0}, {0, 0}}}),
		features: []geo.LayerFeature{lfeature("f", cbox(0.5, -1, 2, 2))},
		plotHa:   cellHa, wantHa: 0.5 * cellHa, wantPct: 50, wantIDs: []string{"f"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := geo.NewIndex(deforestation(tt.features...))
			res, err := ix.Screen(tt.plot)
			if err != nil {
				t.Fatalf("Screen: %v", err)
			}
			if !near(res.PlotHa, tt.plotHa, 1e-5*tt.plotHa+1e-9) {
				t.Errorf("PlotHa: got %.6f, want %.6f", res.PlotHa, tt.plotHa)
			}
			l := res.Layers[0]
			if !near(l.OverlapHa, tt.wantHa, 1e-5*tt.plotHa+1e-9) {
				t.Errorf("OverlapHa: got %.6f, want %.6f", l.OverlapHa, tt.wantHa)
			}
			if !near(l.OverlapPct, tt.wantPct, 0.1) {
				t.Errorf("OverlapPct: got %.4f, want %.4f", l.OverlapPct, tt.wantPct)
			}
			if !slices.Equal(l.FeatureIDs, tt.wantIDs) {
				t.Errorf("FeatureIDs: got %q, want %q", l.FeatureIDs, tt.wantIDs)
			}
			if !l.Covered {
				t.Errorf("Covered: got false, want true")
			}
		})
	}
}

func TestIndex_Screen_Coverage(t *testing.T) {
	layer := func(cov ...geo.Polygon) *geo.Layer {
		return &geo.Layer{ID: "l", Kind: geo.DeforestationAfterCutoff, Coverage: cov}
	}
	tests := []struct {
		name  string
		layer *geo.Layer
		plot  geo.Geometry
		want  bool
	}{
		{"inside", layer(box(0, 0, 1, 1)), polygon(cbox(10, 10, 11, 11)), true},
		{"edge on the boundary", layer(box(0, 0, 1, 1)), polygon(cbox(0, 10, 1, 11)), true},
		{"equal to coverage", layer(cbox(0, 0, 1, 1)), polygon(cbox(0, 0, 1, 1)), true},
		// A triangle holding the plot but not its box: decided by clipping.
		{"inside a triangle", layer(geo.Polygon{geo.Ring{{0, 0}, {1, 0}, {0, 1}, {0, 0}}}), polygon(geo.Polygon{geo.Ring{{0.1, 0.1}, {0.5, 0.1}, {0.1, 0.5}, {0.1, 0.1}}}), true},
		{"across a triangle's edge", layer(geo.Polygon{geo.Ring{{0, 0}, {1, 0}, {0, 1}, {0, 0}}}), polygon(geo.Polygon{geo.Ring{{0.1, 0.1}, {1, 0.1}, {0.1, 1}, {0.1, 0.1}}}), false},
		{"partly outside", layer(box(0, 0, 1, 1)), polygon(cbox(-0.5, 10, 0.5, 11)), false},
		{"outside", layer(box(0, 0, 1, 1)), polygon(cbox(-2, 10, -1, 11)), false},
		{"no coverage polygons", layer(), polygon(cbox(10, 10, 11, 11)), false},
		// Two tiles [0,0.5] and [0.5,1] (by longitude); the plot straddles
		// their shared edge and lies inside their union.
		{"across adjacent tiles", layer(box(0, 0, 0.5, 1), box(0.5, 0, 1, 1)), polygon(box(0.49, 0.1, 0.51, 0.11)), true},
		// Tiles with a gap [0.5,0.6] between them.
		{"across a gap", layer(box(0, 0, 0.5, 1), box(0.6, 0, 1, 1)), polygon(box(0.49, 0.1, 0.61, 0.11)), false},
		{"point inside", layer(box(0, 0, 1, 1)), geo.Geometry{Type: geo.TypePoint, Points: []geo.Position{{0.5, 0.5}}}, true},
		{"point outside", layer(box(0, 0, 1, 1)), geo.Geometry{Type: geo.TypePoint, Points: []geo.Position{{1.5, 0.5}}}, false},
		{"multipoint half outside", layer(box(0, 0, 1, 1)), geo.Geometry{Type: geo.TypeMultiPoint, Points: []geo.Position{{0.5, 0.5}, {1.5, 0.5}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := geo.NewIndex(tt.layer).Screen(tt.plot)
			if err != nil {
				t.Fatalf("Screen: %v", err)
			}
			if got := res.Layers[0].Covered; got != tt.want {
				t.Errorf("Covered: got %v, want %v", got, tt.want)
			}
			if got := res.Covered(geo.DeforestationAfterCutoff); got != tt.want {
				t.Errorf("Result.Covered: got %v, want %v", got, tt.want)
			}
			if res.Covered(geo.ProtectedArea) {
				t.Errorf("Result.Covered(ProtectedArea): got true, want false")
			}
		})
	}
}

func TestIndex_ScreenArea_Points(t *testing.T) {
	ix := geo.NewIndex(deforestation(lfeature("f", cbox(0, 0, 1, 1))))
	pt := func(ps ...geo.Position) geo.Geometry {
		if len(ps) == 1 {
			return geo.Geometry{Type: geo.TypePoint, Points: ps}
		}
		return geo.Geometry{Type: geo.TypeMultiPoint, Points: ps}
	}
	tests := []struct {
		name           string
		g              geo.Geometry
		plotHa, wantHa float64
		wantPct        float64
		wantIDs        []string
	}{
		{"inside", pt(geo.Position{c(0.5), c(0.5)}), 2, 2, 100, []string{"f"}},
		{"outside", pt(geo.Position{c(1.5), c(0.5)}), 2, 0, 0, nil},
		{"on the boundary", pt(geo.Position{c(1), c(0.5)}), 2, 2, 100, []string{"f"}},
		// Two plots of 2 ha each, one inside.
		{"multipoint", pt(geo.Position{c(0.5), c(0.5)}, geo.Position{c(1.5), c(0.5)}), 4, 2, 50, []string{"f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.ScreenArea(tt.g, 2)
			if err != nil {
				t.Fatalf("ScreenArea: %v", err)
			}
			l := res.Layers[0]
			if res.PlotHa != tt.plotHa || l.OverlapHa != tt.wantHa || l.OverlapPct != tt.wantPct {
				t.Errorf("got plot %v ha, overlap %v ha %v %%, want %v, %v, %v", res.PlotHa, l.OverlapHa, l.OverlapPct, tt.plotHa, tt.wantHa, tt.wantPct)
			}
			if !slices.Equal(l.FeatureIDs, tt.wantIDs) {
				t.Errorf("FeatureIDs: got %q, want %q", l.FeatureIDs, tt.wantIDs)
			}
		})
	}
	t.Run("Screen counts 0 ha", func(t *testing.T) {
		res, err := ix.Screen(pt(geo.Position{c(0.5), c(0.5)}))
		if err != nil {
			t.Fatalf("Screen: %v", err)
		}
		if l := res.Layers[0]; res.PlotHa != 0 || l.OverlapHa != 0 || l.OverlapPct != 100 {
			t.Errorf("got plot %v ha, overlap %v ha %v %%, want 0, 0, 100", res.PlotHa, l.OverlapHa, l.OverlapPct)
		}
	})
}

func TestIndex_Screen_Layers(t *testing.T) {
	// Three layers, reported in order, each measured on its own.
	pa := &geo.Layer{ID: "pa", Kind: geo.ProtectedArea, Features: []geo.LayerFeature{lfeature("p", cbox(0, 0, 0.25, 1))}}
	fc := &geo.Layer{ID: "fc", Kind: geo.ForestCover2020, Coverage: []geo.Polygon{box(-1, -1, 1, 1)},
		Features: []geo.LayerFeature{lfeature("x", cbox(0, 0, 1, 1))}}
	ix := geo.NewIndex(deforestation(lfeature("d", cbox(0.5, 0, 1, 1))), nil, pa, fc)
	res, err := ix.Screen(polygon(cbox(0, 0, 1, 1)))
	if err != nil {
		t.Fatalf("Screen: %v", err)
	}
	want := []struct {
		id  string
		pct float64
		cov bool
	}{{"defo", 50, true}, {"pa", 25, false}, {"fc", 100, true}}
	if len(res.Layers) != len(want) {
		t.Fatalf("got %d layers, want %d", len(res.Layers), len(want))
	}
	for i, w := range want {
		l := res.Layers[i]
		if l.LayerID != w.id || !near(l.OverlapPct, w.pct, 0.01) || l.Covered != w.cov {
			t.Errorf("layer %d: got %s %.3f %% covered %v, want %s %.3f %% %v", i, l.LayerID, l.OverlapPct, l.Covered, w.id, w.pct, w.cov)
		}
	}
}

// TestIndex_Screen_Clipping checks the clipping library against an
// independent method on random convex polygons: Sutherland-Hodgman clipping
// (exact for a convex clip region) and the shoelace area, in square degrees
// scaled to hectares. Half the cases reuse corners and edges of the plot to
// provoke the degenerate cases: shared vertices, collinear edges.
func TestIndex_Screen_Clipping(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		// Near (0, 0) and near Rondônia, where coordinates have less
		// precision to spare.
		x, y := 0.0, 0.0
		if i%4 >= 2 {
			x, y = -61.5, -10.5
		}
		plot := randomConvex(r, x, y, 0.01)
		var feat geo.Ring
		if i%2 == 0 {
			feat = randomConvex(r, x+(r.Float64()-0.5)*0.01, y+(r.Float64()-0.5)*0.01, 0.01)
		} else {
			// The plot's own corners, some of them, plus others: shares
			// vertices and edges with the plot.
			var pts []geo.Position
			for _, p := range plot[:len(plot)-1] {
				if r.IntN(2) == 0 {
					pts = append(pts, p)
				}
			}
			pts = append(pts, randomConvex(r, x+0.003, y+0.003, 0.006)...)
			feat = hull(pts)
			if len(feat) < 4 {
				continue
			}
		}
		want := shoelace(clipConvex(plot, feat))
		whole := shoelace(plot)
		res, err := geo.NewIndex(deforestation(lfeature("f", geo.Polygon{feat}))).Screen(polygon(geo.Polygon{plot}))
		if err != nil {
			t.Fatalf("case %d: Screen: %v\nplot %v\nfeature %v", i, err, plot, feat)
		}
		got := res.Layers[0].OverlapPct
		if !near(got, 100*want/whole, 0.01) {
			t.Errorf("case %d: got %.4f %%, want %.4f %%\nplot %v\nfeature %v", i, got, 100*want/whole, plot, feat)
		}
	}
}

func TestIndex_Screen_Concurrent(t *testing.T) {
	ix := geo.NewIndex(deforestation(lfeature("f", cbox(0.5, -1, 2, 2))))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				res, err := ix.Screen(polygon(cbox(0, 0, 1, 1)))
				if err != nil || !near(res.Layers[0].OverlapPct, 50, 0.01) {
					t.Errorf("got %v, %v, want 50 %%", res, err)
				}
			}
		})
	}
	wg.Wait()
}

// randomConvex returns a closed convex ring, counter-clockwise, of 3 to 12
// corners on a circle of radius r about (x, y), rounded to 6 decimals.
func randomConvex(rng *rand.Rand, x, y, r float64) geo.Ring {
	n := 3 + rng.IntN(10)
	angles := make([]float64, n)
	for i := range angles {
		angles[i] = rng.Float64() * 2 * math.Pi
	}
	slices.Sort(angles)
	var ring geo.Ring
	for _, a := range angles {
		p := geo.Position{round6(x + r*math.Cos(a)), round6(y + r*math.Sin(a))}
		if len(ring) == 0 || ring[len(ring)-1] != p {
			ring = append(ring, p)
		}
	}
	return hull(ring)
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// hull returns the convex hull of pts (monotone chain), closed,
// counter-clockwise, without collinear corners.
func hull(pts []geo.Position) geo.Ring {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b geo.Position) int {
		if a[0] != b[0] {
			return cmpF(a[0], b[0])
		}
		return cmpF(a[1], b[1])
	})
	pts = slices.Compact(pts)
	if len(pts) < 3 {
		return nil
	}
	var h []geo.Position
	for pass := 0; pass < 2; pass++ {
		start := len(h)
		for _, p := range pts {
			for len(h) >= start+2 && cross(h[len(h)-2], h[len(h)-1], p) <= 0 {
				h = h[:len(h)-1]
			}
			h = append(h, p)
		}
		h = h[:len(h)-1]
		slices.Reverse(pts)
	}
	if len(h) < 3 {
		return nil
	}
	return append(geo.Ring(h), h[0])
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cross(o, a, b geo.Position) float64 {
	return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0])
}

// clipConvex clips subject by the convex counter-clockwise ring clip
// (Sutherland-Hodgman).
func clipConvex(subject, clip geo.Ring) []geo.Position {
	out := slices.Clone(subject[:len(subject)-1])
	for i := 0; i+1 < len(clip) && len(out) > 0; i++ {
		a, b := clip[i], clip[i+1]
		in := out
		out = nil
		for j := range in {
			p, q := in[j], in[(j+1)%len(in)]
			pin, qin := cross(a, b, p) >= 0, cross(a, b, q) >= 0
			if pin {
				out = append(out, p)
			}
			if pin != qin {
				d1, d2 := cross(a, b, p), cross(a, b, q)
				t := d1 / (d1 - d2)
				out = append(out, geo.Position{p[0] + t*(q[0]-p[0]), p[1] + t*(q[1]-p[1])})
			}
		}
	}
	return out
}

// shoelace returns the planar area of a ring (closed or not).
func shoelace(r []geo.Position) float64 {
	var s float64
	for i := range r {
		p, q := r[i], r[(i+1)%len(r)]
		s += p[0]*q[1] - q[0]*p[1]
	}
	return math.Abs(s) / 2
}

// BenchmarkScreen screens plots of 20-200 corners, 100 m to 2 km across,
// against a layer of 100,000 small polygons (hexagons to 24-gons, 100 m to
// 2 km across) scattered over 10° × 10°, with b.RunParallel on GOMAXPROCS
// goroutines. It reports plots/s and the features overlapped per plot.
func BenchmarkScreen(b *testing.B) {
	r := rand.New(rand.NewPCG(2020, 12_31))
	star := func(n int, x, y, radius float64) geo.Polygon {
		ring := make(geo.Ring, 0, n+1)
		for i := range n {
			a := 2 * math.Pi * float64(i) / float64(n)
			rr := radius * (0.6 + 0.4*r.Float64())
			ring = append(ring, geo.Position{round6(x + rr*math.Cos(a)), round6(y + rr*math.Sin(a))})
		}
		return geo.Polygon{append(ring, ring[0])}
	}
	fs := make([]geo.LayerFeature, 100_000)
	for i := range fs {
		fs[i] = geo.LayerFeature{ID: strconv.Itoa(i), Polygons: []geo.Polygon{star(6+r.IntN(19), -60+10*r.Float64(), -10+10*r.Float64(), 0.0005+0.009*r.Float64())}}
	}
	ix := geo.NewIndex(&geo.Layer{ID: "bench", Kind: geo.DeforestationAfterCutoff,
		Coverage: []geo.Polygon{box(-60, -10, -50, 0)}, Features: fs})
	plots := make([]geo.Geometry, 1000)
	for i := range plots {
		plots[i] = polygon(star(20+r.IntN(181), -60+10*r.Float64(), -10+10*r.Float64(), 0.0005+0.009*r.Float64()))
	}
	var (
		mu    sync.Mutex
		next  int
		hits  int
		start = time.Now()
	)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			mu.Lock()
			i := next % len(plots)
			next++
			mu.Unlock()
			res, err := ix.Screen(plots[i])
			if err != nil {
				b.Errorf("plot %d: %v", i, err)
			}
			n += len(res.Layers[0].FeatureIDs)
		}
		mu.Lock()
		hits += n
		mu.Unlock()
	})
	secs := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/secs, "plots/s")
	b.ReportMetric(float64(hits)/float64(b.N), "overlaps/plot")
}

// antimeridianBand is a layer of a feature every degree round the globe in
// the band from 5 to 6 N, each 0.8° wide, "f-180" to "f179", covering the
// band in two polygons that meet at 180 and -180; and a plot across the
// antimeridian sent as docs/screening.md says, two polygons meeting there.
func antimeridianBand() (*geo.Index, geo.Geometry) {
	fs := make([]geo.LayerFeature, 0, 360)
	for lon := -180; lon < 180; lon++ {
		fs = append(fs, geo.LayerFeature{ID: "f" + strconv.Itoa(lon), Polygons: []geo.Polygon{box(float64(lon)+0.1, 5, float64(lon)+0.9, 6)}})
	}
	ix := geo.NewIndex(&geo.Layer{ID: "band", Kind: geo.DeforestationAfterCutoff,
		Coverage: []geo.Polygon{box(-180, 4, 0, 7), box(0, 4, 180, 7)}, Features: fs})
	return ix, polygon(box(179.5, 5.2, 180, 5.8), box(-180, 5.2, -179.5, 5.8))
}

// A plot split at 180° overlaps the features under its halves only, and
// the band's two coverage polygons cover it between them.
func TestScreen_AcrossAntimeridian(t *testing.T) {
	ix, plot := antimeridianBand()
	res, err := ix.Screen(plot)
	if err != nil {
		t.Fatal(err)
	}
	l := res.Layers[0]
	if !l.Covered || !slices.Equal(l.FeatureIDs, []string{"f-180", "f179"}) {
		t.Errorf("covered %v, features %v; want covered, f-180 and f179", l.Covered, l.FeatureIDs)
	}
	// Each half overlaps 0.4 of its 0.5° width (near enough: the
	// geodesic sides of a narrower box bulge less).
	if want := 0.8 * res.PlotHa; math.Abs(l.OverlapHa-want) > 1e-4*want || math.Abs(l.OverlapPct-80) > 1e-2 {
		t.Errorf("overlap %v ha, %v %%; want %v ha, 80 %%", l.OverlapHa, l.OverlapPct, want)
	}
}

// BenchmarkScreen_AcrossAntimeridian screens a plot split at 180° against
// a layer with a feature every degree of the band it lies in (see
// antimeridianBand).
func BenchmarkScreen_AcrossAntimeridian(b *testing.B) {
	ix, plot := antimeridianBand()
	for range b.N {
		if _, err := ix.Screen(plot); err != nil {
			b.Fatal(err)
		}
	}
}
