package plotfile

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// The parse rate of the KML, KMZ and Shapefile readers on 10,000 plots
// of 6 vertices with their properties (go test -bench Read -run '^$').

const benchPlots = 10000

// benchRing is plot i's ring in longitude and latitude: a hexagon of
// about 1 ha in Ghana, on a grid.
func benchRing(i int) [][2]float64 {
	lon0, lat0 := -2.5+float64(i%100)*0.01, 5.0+float64(i/100)*0.01
	var r [][2]float64
	for k := 0; k <= 6; k++ {
		a := float64(k%6) * math.Pi / 3
		r = append(r, [2]float64{lon0 + 0.0005*math.Cos(a), lat0 + 0.0005*math.Sin(a)})
	}
	return r
}

func benchKML() []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><Folder>`)
	for i := range benchPlots {
		fmt.Fprintf(&b, `<Placemark><name>plot %d</name><ExtendedData><SchemaData schemaUrl="#plots">
<SimpleData name="externalId">GH-%05d</SimpleData><SimpleData name="commodity">cocoa</SimpleData>
<SimpleData name="producerCountry">GH</SimpleData><SimpleData name="producerName">Farmer %d</SimpleData>
</SchemaData></ExtendedData><Polygon><outerBoundaryIs><LinearRing><coordinates>`, i, i, i)
		for _, p := range benchRing(i) {
			fmt.Fprintf(&b, "%.6f,%.6f,0 ", p[0], p[1])
		}
		b.WriteString("</coordinates></LinearRing></outerBoundaryIs></Polygon></Placemark>\n")
	}
	b.WriteString(`</Folder></Document></kml>`)
	return []byte(b.String())
}

func benchZip(files ...any) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, _ := zw.Create(files[i].(string))
		_, _ = w.Write(files[i+1].([]byte))
	}
	_ = zw.Close()
	return b.Bytes()
}

// benchShapefile is the plots as a zipped Shapefile, in longitude and
// latitude or in UTM zone 30N (tm).
func benchShapefile(tm func(lon, lat float64) (x, y float64), prj string) []byte {
	var shp bytes.Buffer
	shp.Write(binary.BigEndian.AppendUint32(nil, 9994))
	shp.Write(make([]byte, 96))
	fields := []string{"externalId", "commodity", "producerCo", "producerNa"}
	const size = 20
	dbf := make([]byte, 32)
	binary.LittleEndian.PutUint32(dbf[4:], benchPlots)
	binary.LittleEndian.PutUint16(dbf[8:], uint16(32+32*len(fields)+1))
	binary.LittleEndian.PutUint16(dbf[10:], uint16(1+size*len(fields)))
	dbf[0] = 3
	for _, f := range fields {
		d := make([]byte, 32)
		copy(d, f)
		d[11], d[16] = 'C', size
		dbf = append(dbf, d...)
	}
	dbf = append(dbf, 0x0D)
	for i := range benchPlots {
		ring := benchRing(i)
		c := binary.LittleEndian.AppendUint32(nil, 5)
		c = append(c, make([]byte, 32)...)
		c = binary.LittleEndian.AppendUint32(c, 1)
		c = binary.LittleEndian.AppendUint32(c, uint32(len(ring)))
		c = binary.LittleEndian.AppendUint32(c, 0)
		for k := len(ring) - 1; k >= 0; k-- { // clockwise
			x, y := tm(ring[k][0], ring[k][1])
			c = binary.LittleEndian.AppendUint64(c, math.Float64bits(x))
			c = binary.LittleEndian.AppendUint64(c, math.Float64bits(y))
		}
		shp.Write(binary.BigEndian.AppendUint32(nil, uint32(i+1)))
		shp.Write(binary.BigEndian.AppendUint32(nil, uint32(len(c)/2)))
		shp.Write(c)
		dbf = append(dbf, ' ')
		for _, v := range []string{fmt.Sprintf("GH-%05d", i), "cocoa", "GH", fmt.Sprintf("Farmer %d", i)} {
			dbf = append(dbf, fmt.Sprintf("%-*s", size, v)...)
		}
	}
	return benchZip("plots.shp", shp.Bytes(), "plots.dbf", dbf, "plots.prj", []byte(prj))
}

// utm30NForward is a rough transverse Mercator (spherical): the benchmark
// needs coordinates in metres, not exact ones.
func utm30NForward(lon, lat float64) (float64, float64) {
	const r = 6371000 * 0.9996
	l, p := (lon+3)*math.Pi/180, lat*math.Pi/180
	b := math.Cos(p) * math.Sin(l)
	return 500000 + r*math.Atanh(b), r * math.Atan2(math.Tan(p), math.Cos(l))
}

func benchRead(b *testing.B, f Format, body []byte) {
	b.Helper()
	c, err := Convert(f, body, Options{})
	if err != nil || len(c.Sources) != benchPlots {
		b.Fatalf("%v", err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		if _, err := Convert(f, body, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchPlots*b.N)/b.Elapsed().Seconds(), "features/s")
}

func BenchmarkReadKML(b *testing.B) { benchRead(b, KML, benchKML()) }

func BenchmarkReadKMZ(b *testing.B) {
	benchRead(b, KMZ, benchZip("doc.kml", benchKML()))
}

func BenchmarkReadShapefileWGS84(b *testing.B) {
	prj := `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`
	benchRead(b, Shapefile, benchShapefile(func(lon, lat float64) (float64, float64) { return lon, lat }, prj))
}

func BenchmarkReadShapefileUTM(b *testing.B) {
	benchRead(b, Shapefile, benchShapefile(utm30NForward, utm30N))
}
