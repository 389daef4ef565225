package plotfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

// Two layers, points.shp and polygons.shp, read in the order of their
// names: the GeoJSON's point, then its polygons.
func TestReadShapefile_GDAL(t *testing.T) {
	byKind := func(point bool) func(string) bool {
		return func(id string) bool { return (id == "GH-003") == point }
	}
	for _, name := range []string{"plots-wgs84.zip", "plots-utm30n.zip"} {
		t.Run(name, func(t *testing.T) {
			c, err := Convert(Shapefile, testdataFile(t, name), Options{})
			if err != nil {
				t.Fatal(err)
			}
			n := 5
			keep := func(id string) bool { return true }
			if strings.Contains(name, "utm") {
				n, keep = 4, func(id string) bool { return !strings.HasPrefix(id, "BR") }
			}
			// The plots in the order of the zip's layers.
			var want []string
			want = append(want, "points.records[0]")
			for i := 0; i < n; i++ {
				want = append(want, fmt.Sprintf("polygons.records[%d]", i))
			}
			if got := strings.Join(c.Sources, " "); got != strings.Join(want, " ") {
				t.Errorf("sources %s, want %s", got, strings.Join(want, " "))
			}
			points := &Converted{GeoJSON: sub(t, c.GeoJSON, 0, 1), Sources: c.Sources[:1]}
			assertSamePlots(t, points, "plots.geojson", func(id string) bool { return byKind(true)(id) && keep(id) })
			polygons := &Converted{GeoJSON: sub(t, c.GeoJSON, 1, len(c.Sources)), Sources: c.Sources[1:]}
			assertSamePlots(t, polygons, "plots.geojson", func(id string) bool { return byKind(false)(id) && keep(id) })
			want2 := map[string]string{"producerCountry": "producerCo", "producerName": "producerNa", "productionPlace": "production"}
			if fmt.Sprint(c.Columns) != fmt.Sprint(want2) {
				t.Errorf("columns %v, want %v", c.Columns, want2)
			}
			if p := c.Path("features[2].properties.producerCountry"); p != "polygons.records[1].producerCo" {
				t.Errorf("path %s", p)
			}
		})
	}
}

// sub is the FeatureCollection of features [from, to) of fc.
func sub(t *testing.T, fc []byte, from, to int) []byte {
	t.Helper()
	var c struct {
		Features []feature `json:"features"`
	}
	if err := json.Unmarshal(fc, &c); err != nil {
		t.Fatal(err)
	}
	out, err := collection(c.Features[from:to])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// One layer: records[i]. Holes (the .shp's counter-clockwise rings) go
// in the outer ring that holds them, in a MultiPolygon's second part
// too; the .dbf's ISO-8859-1 (GDAL's default) is read; a field the
// appliance does not read keeps its name, cut as the .dbf has it.
func TestReadShapefile_HolesAndLatin1(t *testing.T) {
	for _, name := range []string{"extra-wgs84.zip", "extra-utm21s.zip"} {
		t.Run(name, func(t *testing.T) {
			c, err := Convert(Shapefile, testdataFile(t, name), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var keep func(string) bool
			if strings.Contains(name, "utm") {
				keep = func(id string) bool { return strings.HasPrefix(id, "BR") }
			}
			assertSamePlots(t, c, "extra.geojson", keep)
			if c.Sources[0] != "records[0]" {
				t.Errorf("sources %v", c.Sources)
			}
			props := rawProperties(t, c.GeoJSON)
			if props[0]["Name"] != "Talhão 7" || props[0]["Descriptio"] != "pasto & soja <2024>" || props[1]["producerName"] != "Sítio São João" {
				t.Errorf("properties %v", props)
			}
		})
	}
}

// A .cpg names the code page; without one, UTF-8 is read as UTF-8 and
// anything else as Windows-1252 (ISO-8859-1's letters).
func TestDBFDecoder(t *testing.T) {
	utf, latin := []byte("Soubr\xc3\xa9"), []byte("Soubr\xe9")
	cases := []struct {
		cpg  string
		in   []byte
		want string
	}{
		{"", utf, "Soubré"},
		{"", latin, "Soubré"},
		{"UTF-8\n", utf, "Soubré"},
		{"1252", utf, "SoubrÃ©"},
		{"ISO-8859-1", latin, "Soubré"},
		{"88591", latin, "Soubré"},
		{"CP1252", latin, "Soubré"},
		{"UTF-8", latin, "Soubr\uFFFD"},
		{"437", latin, "SoubrΘ"},
		{"no such page", latin, "Soubré"},
	}
	for _, c := range cases {
		if got := dbfDecoder(c.cpg, c.in)(c.in); got != c.want {
			t.Errorf(".cpg %q: %q, want %q", c.cpg, got, c.want)
		}
	}
	// The .cpg beside the .dbf in the zip is the one read.
	c, err := Convert(Shapefile, rezip(t, "extra-wgs84.zip", nil, map[string][]byte{"extra.cpg": []byte("UTF-8")}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rawProperties(t, c.GeoJSON)[2]["productionPlace"]; got != "Soubr\uFFFD" {
		t.Errorf("ISO-8859-1 read as the .cpg's UTF-8: %q", got)
	}
}

func TestReadShapefile_Problems(t *testing.T) {
	convert := func(body []byte) geo.Problems {
		t.Helper()
		_, err := Convert(Shapefile, body, Options{})
		return problemsFrom(t, err)
	}
	drop := func(ext string) func(string, []byte) (string, []byte) {
		return func(name string, data []byte) (string, []byte) {
			if strings.HasSuffix(name, ext) {
				return "", nil
			}
			return name, data
		}
	}

	// No .dbf: a problem for each layer.
	ps := convert(rezip(t, "plots-wgs84.zip", drop(".dbf"), nil))
	hasProblem(t, ps, "points.dbf", "points.shp has no points.dbf")
	hasProblem(t, ps, "polygons.dbf", "polygons.shp has no polygons.dbf")

	// Another datum.
	etrs := []byte(`PROJCS["ETRS89 / UTM zone 30N",GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",SPHEROID["GRS 1980",6378137,298.257222101]]],PROJECTION["Transverse_Mercator"],PARAMETER["central_meridian",-3],UNIT["metre",1]]`)
	body := rezip(t, "extra-utm21s.zip", func(name string, data []byte) (string, []byte) {
		if strings.HasSuffix(name, ".prj") {
			data = etrs
		}
		return name, data
	}, nil)
	ps = convert(body)
	hasProblem(t, ps, "prj", "'ETRS89 / UTM zone 30N' is not one the appliance can reproject", "ogr2ogr -t_srs EPSG:4326")

	// No .prj: longitudes and latitudes are taken as WGS 84, anything
	// else refused.
	if _, err := Convert(Shapefile, rezip(t, "extra-wgs84.zip", drop(".prj"), nil), Options{}); err != nil {
		t.Errorf("WGS 84 without .prj: %v", err)
	}
	ps = convert(rezip(t, "extra-utm21s.zip", drop(".prj"), nil))
	hasProblem(t, ps, "prj", "no .prj", "records[0]")

	// Not a zip; a zip without a .shp; a damaged .shp; a .dbf of
	// another layer.
	hasProblem(t, convert(testdataFile(t, "plots.kml")), "body", "not a zipped Shapefile")
	hasProblem(t, convert(rezip(t, "plots-wgs84.zip", drop(".shp"), nil)), "body", "no .shp")
	cut := rezip(t, "extra-wgs84.zip", func(name string, data []byte) (string, []byte) {
		if strings.HasSuffix(name, ".shp") {
			data = data[:len(data)-10]
		}
		return name, data
	}, nil)
	hasProblem(t, convert(cut), "shp", "cut short", "records[3]")
	// The .dbf of another layer.
	polygonsDBF := zipEntry(t, testdataFile(t, "plots-wgs84.zip"), "polygons.dbf")
	swapped := rezip(t, "plots-wgs84.zip", func(name string, data []byte) (string, []byte) {
		switch {
		case name == "points.dbf":
			return name, polygonsDBF
		case !strings.HasPrefix(name, "points."):
			return "", nil
		}
		return name, data
	}, nil)
	hasProblem(t, convert(swapped), "dbf", "5 records", "1 shapes")
}

// A shape that cannot be a plot is a problem at its record; the others
// are still read, for every problem to be told at once.
func TestReadShapefile_Shapes(t *testing.T) {
	shp := func(shapes ...[]byte) []byte {
		var b bytes.Buffer
		b.Write(be(9994))
		b.Write(make([]byte, 96))
		for i, s := range shapes {
			b.Write(be(uint32(i + 1)))
			b.Write(be(uint32(len(s) / 2)))
			b.Write(s)
		}
		return b.Bytes()
	}
	null := le(0)
	line := append(le(3), make([]byte, 40)...)
	point := append(le(1), append(f64(-1.5), f64(5.25)...)...)
	pointZ := append(le(11), append(append(f64(-1.5), f64(5.25)...), f64(100)...)...)
	multi := append(append(le(8), make([]byte, 32)...), le(2)...)
	multi = append(multi, append(append(f64(1), f64(2)...), append(f64(3), f64(4)...)...)...)
	withShapes := func(shapes ...[]byte) []byte {
		return rezip(t, "extra-wgs84.zip", func(name string, data []byte) (string, []byte) {
			switch {
			case strings.HasSuffix(name, ".shp"):
				data = shp(shapes...)
			case strings.HasSuffix(name, ".dbf"):
				data = dbfWithRecords(t, data, len(shapes))
			}
			return name, data
		}, nil)
	}
	_, err := Convert(Shapefile, withShapes(null, line, point, pointZ, multi), Options{})
	ps := problemsFrom(t, err)
	if len(ps) != 2 {
		t.Errorf("%d problems, want 2: %v", len(ps), ps)
	}
	hasProblem(t, ps, "records[0].geometry", "no shape")
	hasProblem(t, ps, "records[1].geometry", "polyline", "does not enclose")

	c, err := Convert(Shapefile, withShapes(point, pointZ, multi), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`{"type":"Point","coordinates":[-1.5,5.25]},"properties"`,
		`{"type":"MultiPoint","coordinates":[[1,2],[3,4]]}`,
	} {
		if !strings.Contains(string(c.GeoJSON), s) {
			t.Errorf("output lacks %s: %s", s, c.GeoJSON)
		}
	}

	if _, err := Convert(Shapefile, withShapes(point, pointZ, multi), Options{MaxFeatures: 2}); !errors.Is(err, geo.ErrTooManyFeatures) {
		t.Errorf("3 records, at most 2: %v", err)
	}
}

func be(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func le(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }

func f64(v float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)) }

// dbfWithRecords is a .dbf of n records, each its last.
func dbfWithRecords(t *testing.T, dbf []byte, n int) []byte {
	t.Helper()
	headerLen := int(binary.LittleEndian.Uint16(dbf[8:]))
	recordLen := int(binary.LittleEndian.Uint16(dbf[10:]))
	count := int(binary.LittleEndian.Uint32(dbf[4:]))
	last := dbf[headerLen+(count-1)*recordLen : headerLen+count*recordLen]
	out := append([]byte(nil), dbf[:headerLen]...)
	binary.LittleEndian.PutUint32(out[4:], uint32(n))
	for range n {
		out = append(out, last...)
	}
	return append(out, 0x1A)
}
