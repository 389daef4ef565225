package plotfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

// Helpers of the KML and Shapefile tests: the files ogr2ogr wrote from
// testdata/*.geojson must read back as the same plots.

// coordTolerance is how far apart in degrees a coordinate may be from
// the GeoJSON's: reprojection round-off, far under a millimetre.
const coordTolerance = 1e-7

// testdataFile reads a file of testdata.
func testdataFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parsedFeatures is a FeatureCollection as the appliance reads it.
func parsedFeatures(t testing.TB, body []byte) []geo.Feature {
	t.Helper()
	fs, err := geo.ParseFeatureCollection(body, geo.ParseOptions{})
	if err != nil {
		t.Fatalf("the appliance does not read the output: %v\n%s", err, body)
	}
	return fs
}

// rawProperties are each feature's properties as written.
func rawProperties(t testing.TB, body []byte) []map[string]any {
	t.Helper()
	var fc struct {
		Features []struct {
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(body, &fc); err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]any, len(fc.Features))
	for i, f := range fc.Features {
		out[i] = f.Properties
	}
	return out
}

// assertSamePlots checks that got holds the plots of the GeoJSON file
// want whose externalId keep accepts (all when nil), in the same order,
// with the same verdict of geo.Check, the same geometry (each ring up to
// its first vertex and winding, within coordTolerance; each polygon's
// area within 0.01 %) and the same properties the appliance reads.
func assertSamePlots(t *testing.T, got *Converted, want string, keep func(id string) bool) {
	t.Helper()
	var ref []geo.Feature
	for _, f := range parsedFeatures(t, testdataFile(t, want)) {
		if keep == nil || keep(f.Properties.ExternalID) {
			ref = append(ref, f)
		}
	}
	fs := parsedFeatures(t, got.GeoJSON)
	if len(fs) != len(ref) || len(got.Sources) != len(ref) {
		t.Fatalf("%d features and %d sources, want %d", len(fs), len(got.Sources), len(ref))
	}
	for i, w := range ref {
		g := fs[i]
		id := w.Properties.ExternalID
		if gr, _ := geo.Check(g); gr != checkReason(w) {
			t.Errorf("%s: checked %q, want %q as the GeoJSON", id, gr, checkReason(w))
		}
		if !sameProperties(g.Properties, w.Properties) {
			t.Errorf("%s: properties %+v, want %+v", id, g.Properties, w.Properties)
		}
		if g.Geometry.Type != w.Geometry.Type || len(g.Geometry.Polygons) != len(w.Geometry.Polygons) || len(g.Geometry.Points) != len(w.Geometry.Points) {
			t.Errorf("%s: geometry %s of %d polygons and %d points, want %s of %d and %d", id,
				g.Geometry.Type, len(g.Geometry.Polygons), len(g.Geometry.Points),
				w.Geometry.Type, len(w.Geometry.Polygons), len(w.Geometry.Points))
			continue
		}
		for k, p := range w.Geometry.Points {
			if !near(g.Geometry.Points[k], p) {
				t.Errorf("%s: point %v, want %v", id, g.Geometry.Points[k], p)
			}
		}
		for k, wp := range w.Geometry.Polygons {
			gp := g.Geometry.Polygons[k]
			if len(gp) != len(wp) {
				t.Errorf("%s: polygon %d has %d rings, want %d", id, k, len(gp), len(wp))
				continue
			}
			for r := range wp {
				if !sameRing(gp[r], wp[r]) {
					t.Errorf("%s: polygon %d ring %d\n got %v\nwant %v", id, k, r, gp[r], wp[r])
				}
			}
			ga, wa := geo.PolygonArea(toRings(gp)), geo.PolygonArea(toRings(wp))
			if math.Abs(ga-wa) > 1e-4*wa {
				t.Errorf("%s: polygon %d has %.6f ha, want %.6f", id, k, ga, wa)
			}
		}
	}
}

func checkReason(f geo.Feature) string {
	r, _ := geo.Check(f)
	return r
}

func toRings(p geo.Polygon) [][][2]float64 {
	out := make([][][2]float64, len(p))
	for i, r := range p {
		out[i] = r
	}
	return out
}

func sameProperties(a, b geo.Properties) bool {
	if (a.Area == nil) != (b.Area == nil) || (a.Area != nil && *a.Area != *b.Area) {
		return false
	}
	a.Area, b.Area = nil, nil
	return a == b
}

func near(a, b geo.Position) bool {
	return math.Abs(a[0]-b[0]) <= coordTolerance && math.Abs(a[1]-b[1]) <= coordTolerance
}

// sameRing compares closed rings whatever vertex they start at and
// whichever way they wind: a Shapefile winds outer rings clockwise,
// GeoJSON counter-clockwise.
func sameRing(a, b geo.Ring) bool {
	if len(a) != len(b) || len(a) < 2 {
		return len(a) == len(b)
	}
	n := len(a) - 1 // the closing vertex repeats the first
	for start := 0; start < n; start++ {
		for _, dir := range []int{1, -1} {
			ok := true
			for k := 0; k < n && ok; k++ {
				ok = near(a[((start+dir*k)%n+n)%n], b[k])
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// problemsFrom is err as Problems, failing the test for another error.
func problemsFrom(t *testing.T, err error) geo.Problems {
	t.Helper()
	var ps geo.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %v (%T), want geo.Problems", err, err)
	}
	return ps
}

// hasProblem checks that ps holds a problem at path whose issue holds
// every one of words.
func hasProblem(t *testing.T, ps geo.Problems, path string, words ...string) {
	t.Helper()
	for _, p := range ps {
		if p.Path != path {
			continue
		}
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(p.Issue, w)
		}
		if ok {
			return
		}
	}
	t.Errorf("no problem at %s saying %q in %v", path, words, ps)
}

// rezip is the zip archive of testdata/name with its files changed:
// change gets each file's name and content, and returns the name and
// content to write ("" drops the file); add files are appended.
func rezip(t testing.TB, name string, change func(name string, data []byte) (string, []byte), add map[string][]byte) []byte {
	t.Helper()
	body := testdataFile(t, name)
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	write := func(name string, data []byte) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range zr.File {
		n, data := f.Name, readZipFile(t, f)
		if change != nil {
			n, data = change(n, data)
		}
		if n != "" {
			write(n, data)
		}
	}
	for n, data := range add {
		write(n, data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func readZipFile(t testing.TB, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// zipEntry is the file name of the zip archive body.
func zipEntry(t testing.TB, body []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			return readZipFile(t, f)
		}
	}
	t.Fatalf("no %s in the archive", name)
	return nil
}
