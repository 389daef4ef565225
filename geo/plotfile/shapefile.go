package plotfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/eudr/eudr/geo"
)

// Zipped ESRI Shapefiles. No maintained Go package for Shapefiles is
// served by the module proxy (github.com/jonas-p/go-shp is not), and the
// part plots use is small, so this reads them: each layer of the zip (a
// .shp with its .dbf, its .prj and maybe a .cpg; the .shx is not needed
// to read the records in order) in the order of their names. A record is
// a feature: records[i] when the zip holds one layer, polygons.records[i]
// when it holds several. Polygons (Z and M too; rings clockwise are outer,
// counter-clockwise holes of the outer ring that holds them), points and
// multipoints are read; the .dbf's attributes are the properties, names
// cut to 10 characters matched by PropertyName.

// shpLayer is the files of one layer.
type shpLayer struct {
	name               string
	shp, dbf, prj, cpg *zip.File
}

func readShapefile(body []byte, o Options) (*Converted, error) {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body",
			Issue: "not a zipped Shapefile: send the .shp, .shx, .dbf and .prj in a zip archive (" + err.Error() + ")"}}
	}
	layers := map[string]*shpLayer{}
	for _, f := range zr.File {
		name := path.Clean(f.Name)
		if f.FileInfo().IsDir() || strings.HasPrefix(name, "__MACOSX/") || strings.HasPrefix(path.Base(name), "._") {
			continue // folders, and what macOS adds to a zip
		}
		ext := strings.ToLower(path.Ext(name))
		base := strings.TrimSuffix(name, path.Ext(name))
		l := layers[base]
		if l == nil {
			l = &shpLayer{name: base}
			layers[base] = l
		}
		switch ext {
		case ".shp":
			l.shp = f
		case ".dbf":
			l.dbf = f
		case ".prj":
			l.prj = f
		case ".cpg":
			l.cpg = f
		}
	}
	var names []string
	for name, l := range layers {
		if l.shp != nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, geo.Problems{{Code: geo.CodeRequired, Path: "body",
			Issue: "the zip holds no .shp file: a zipped Shapefile holds the .shp, .shx, .dbf and .prj of each layer"}}
	}
	sort.Strings(names)
	r := &shpReader{o: o, output: output{columns: map[string]string{}}}
	for _, name := range names {
		prefix := ""
		if len(names) > 1 {
			prefix = name + "."
		}
		if err := r.layer(prefix, layers[name]); err != nil {
			return nil, err
		}
	}
	return r.converted("the Shapefile holds no records")
}

// shpReader gathers the records of a zipped Shapefile's layers.
type shpReader struct {
	o Options
	unzipper
	output
}

func (r *shpReader) problem(code, path, issue string) {
	r.problems = append(r.problems, geo.Problem{Code: code, Path: path, Issue: issue})
}

// unzip is a file of the archive, within what it may unpack to.

// layer reads one layer's records, or notes its problems. prefix is the
// layer's name and a dot when the zip holds several, else "".
func (r *shpReader) layer(prefix string, l *shpLayer) error {
	if l.dbf == nil {
		r.problem(geo.CodeRequired, prefix+"dbf", fmt.Sprintf(
			"%s.shp has no %s.dbf beside it, which holds its attributes: send the .shp, .shx, .dbf and .prj together", l.name, l.name))
		return nil
	}
	shpData, err := r.readZipped(l.shp)
	if err != nil {
		return err
	}
	dbfData, err := r.readZipped(l.dbf)
	if err != nil {
		return err
	}
	cpg := ""
	if l.cpg != nil {
		b, err := r.readZipped(l.cpg)
		if err != nil {
			return err
		}
		cpg = string(b)
	}
	var proj projection
	if l.prj != nil {
		b, err := r.readZipped(l.prj)
		if err != nil {
			return err
		}
		if proj, err = projectionOf(string(b)); err != nil {
			r.problem(geo.CodeInvalidValue, prefix+"prj", err.Error())
			return nil
		}
	}
	shapes, err := readSHP(shpData)
	if err != nil {
		r.problem(geo.CodeInvalidValue, prefix+"shp", err.Error())
		return nil
	}
	table, err := readDBF(dbfData, cpg)
	if err != nil {
		r.problem(geo.CodeInvalidValue, prefix+"dbf", err.Error())
		return nil
	}
	if len(table.records) != len(shapes) {
		r.problem(geo.CodeInvalidValue, prefix+"dbf", fmt.Sprintf(
			"the .dbf holds %d records and the .shp %d shapes: they must be of one layer", len(table.records), len(shapes)))
		return nil
	}
	if proj == nil {
		if i, ok := outOfRange(shapes); ok {
			r.problem(geo.CodeRequired, prefix+"prj", fmt.Sprintf(
				"there is no .prj and the coordinates are not longitude and latitude (%srecords[%d] is at %v): send the .prj with the .shp", prefix, i, shapes[i].first()))
			return nil
		}
		proj = geographic{}
	}
	for i, s := range shapes {
		if table.deleted[i] {
			continue // deleted in the .dbf, as GDAL reads it
		}
		if r.o.MaxFeatures > 0 && len(r.sources) == r.o.MaxFeatures {
			return fmt.Errorf("more than %d records: %w", r.o.MaxFeatures, geo.ErrTooManyFeatures)
		}
		src := prefix + "records[" + strconv.Itoa(i) + "]"
		r.sources = append(r.sources, src)
		attrs := newAttributes(r.columns)
		for k, fld := range table.fields {
			v := table.records[i][k]
			attrs.value(fld.name, v.text, v.typed)
		}
		g, issue := s.geometry(proj)
		if issue != "" {
			r.problem(geo.CodeInvalidGeometryType, src+".geometry", issue)
			continue
		}
		r.features = append(r.features, feature{Type: "Feature", Geometry: g, Properties: attrs.props})
	}
	return nil
}

// outOfRange finds a shape with a coordinate that cannot be a longitude
// and latitude.
func outOfRange(shapes []shpShape) (int, bool) {
	for i, s := range shapes {
		for _, part := range s.parts {
			for _, p := range part {
				if p[0] < -180 || p[0] > 180 || p[1] < -90 || p[1] > 90 {
					return i, true
				}
			}
		}
	}
	return 0, false
}

// Shape types of the .shp (ESRI Shapefile Technical Description, 1998).
const (
	shpNull        = 0
	shpPoint       = 1
	shpPolyLine    = 3
	shpPolygon     = 5
	shpMultiPoint  = 8
	shpMultiPatch  = 31
	shpZ, shpM     = 10, 20 // added to a type for its Z and M variants
	shpFileCode    = 9994
	shpHeaderBytes = 100
)

// shpShape is one record's shape in the file's coordinates: a point's or
// multipoint's points as one part, a polygon's rings as parts.
type shpShape struct {
	kind  int // its type without Z or M
	parts [][][2]float64
}

func (s shpShape) first() [2]float64 {
	for _, p := range s.parts {
		if len(p) > 0 {
			return p[0]
		}
	}
	return [2]float64{}
}

// readSHP reads a .shp's records in order.
func readSHP(b []byte) ([]shpShape, error) {
	if len(b) < shpHeaderBytes || be32(b, 0) != shpFileCode {
		return nil, errors.New("not a .shp file (it does not begin with the file code 9994)")
	}
	var shapes []shpShape
	for off := shpHeaderBytes; off+8 <= len(b); {
		n := int64(be32(b, off+4)) * 2 // content length, in 16-bit words
		if n < 4 || int64(off)+8+n > int64(len(b)) {
			return nil, fmt.Errorf("the .shp is cut short or damaged at records[%d]", len(shapes))
		}
		c := b[off+8 : off+8+int(n)]
		off += 8 + int(n)
		s, err := readShape(c)
		if err != nil {
			return nil, fmt.Errorf("records[%d] of the .shp is damaged: %v", len(shapes), err)
		}
		shapes = append(shapes, s)
	}
	return shapes, nil
}

// readShape reads one record's content.
func readShape(c []byte) (shpShape, error) {
	typ := int(le32(c, 0))
	kind := typ
	if typ > shpZ && typ != shpMultiPatch {
		kind = typ % 10
	}
	s := shpShape{kind: kind}
	switch kind {
	case shpPoint:
		if len(c) < 20 {
			return s, errors.New("a point shorter than a point")
		}
		s.parts = [][][2]float64{{{lef64(c, 4), lef64(c, 12)}}}
	case shpMultiPoint:
		if len(c) < 40 {
			return s, errors.New("a multipoint shorter than its header")
		}
		n := int64(le32(c, 36))
		if n < 0 || 40+16*n > int64(len(c)) {
			return s, fmt.Errorf("%d points do not fit in the record", n)
		}
		s.parts = [][][2]float64{points(c[40:], int(n))}
	case shpPolygon:
		if len(c) < 44 {
			return s, errors.New("a polygon shorter than its header")
		}
		np, npts := int64(le32(c, 36)), int64(le32(c, 40))
		if np < 0 || npts < 0 || 44+4*np+16*npts > int64(len(c)) {
			return s, fmt.Errorf("%d parts of %d points do not fit in the record", np, npts)
		}
		all := points(c[44+4*np:], int(npts))
		for k := int64(0); k < np; k++ {
			start, end := int64(le32(c, int(44+4*k))), npts
			if k+1 < np {
				end = int64(le32(c, int(44+4*(k+1))))
			}
			if start < 0 || start > end || end > npts {
				return s, fmt.Errorf("part %d runs from point %d to %d of %d", k, start, end, npts)
			}
			s.parts = append(s.parts, all[start:end])
		}
	}
	return s, nil
}

func points(b []byte, n int) [][2]float64 {
	out := make([][2]float64, n)
	for i := range out {
		out[i] = [2]float64{lef64(b, 16*i), lef64(b, 16*i+8)}
	}
	return out
}

// geometry is the shape as GeoJSON in longitude and latitude, or why it
// cannot be a plot.
func (s shpShape) geometry(proj projection) ([]byte, string) {
	const want = "a plot is a polygon or a point"
	switch s.kind {
	case shpNull:
		return nil, "the record has no shape: " + want
	case shpPolyLine:
		return nil, "a polyline is not accepted: a line does not enclose a plot; " + want
	case shpPoint, shpMultiPoint, shpPolygon:
	default:
		return nil, fmt.Sprintf("a shape of type %d is not accepted: %s", s.kind, want)
	}
	var parts [][]coordPair
	var lonLats [][][2]float64
	for _, part := range s.parts {
		out := make([]coordPair, len(part))
		ll := make([][2]float64, len(part))
		for k, p := range part {
			lon, lat := proj.lonLat(p[0], p[1])
			if !finite(lon) || !finite(lat) {
				return nil, fmt.Sprintf("the coordinates %v are not numbers", p)
			}
			if _, same := proj.(geographic); same {
				out[k] = coordPair{numberText(lon), numberText(lat)}
			} else {
				out[k] = coordPair{numberText(round9(lon)), numberText(round9(lat))}
			}
			ll[k] = [2]float64{lon, lat}
		}
		parts = append(parts, out)
		lonLats = append(lonLats, ll)
	}
	switch {
	case s.kind == shpPoint:
		return pointGeometry(parts[0][0]), ""
	case s.kind == shpMultiPoint && len(parts[0]) == 0:
		return nil, "the multipoint has no points: " + want
	case s.kind == shpMultiPoint:
		return multiPointGeometry(parts[0]), ""
	case len(parts) == 0:
		return nil, "the polygon has no rings: " + want
	}
	return polygonsGeometry(assemble(parts, lonLats)), ""
}

// assemble groups a Shapefile polygon's rings into polygons: a clockwise
// ring is an outer ring, a counter-clockwise one a hole of the smallest
// outer ring holding it (an outer ring itself when none does, as GDAL
// reads it). Rings come out wound as RFC 7946 has them: outer rings
// counter-clockwise, holes clockwise.
func assemble(parts [][]coordPair, lonLats [][][2]float64) []coordPolygon {
	type outer struct {
		k    int
		area float64
	}
	var outers []outer
	var holes []int
	for k, ll := range lonLats {
		if a := signedArea(ll); a > 0 {
			holes = append(holes, k)
		} else {
			outers = append(outers, outer{k, -a})
		}
	}
	polys := make([]coordPolygon, len(outers))
	for i, o := range outers {
		polys[i] = coordPolygon{wound(parts[o.k], lonLats[o.k], true)}
	}
	for _, h := range holes {
		best := -1
		for i, o := range outers {
			if len(lonLats[h]) > 0 && inside(lonLats[h][0], lonLats[o.k]) && (best < 0 || o.area < outers[best].area) {
				best = i
			}
		}
		if best < 0 {
			polys = append(polys, coordPolygon{wound(parts[h], lonLats[h], true)})
			continue
		}
		polys[best] = append(polys[best], wound(parts[h], lonLats[h], false))
	}
	return polys
}

// signedArea is twice the area a ring encloses in the plane, positive
// when it winds counter-clockwise.
func signedArea(r [][2]float64) float64 {
	var a float64
	for i := 0; i+1 < len(r); i++ {
		a += r[i][0]*r[i+1][1] - r[i+1][0]*r[i][1]
	}
	return a
}

// wound is a ring wound counter-clockwise (ccw) or clockwise.
func wound(r []coordPair, ll [][2]float64, ccw bool) coordRing {
	out := append(coordRing(nil), r...)
	if (signedArea(ll) > 0) != ccw {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// inside reports whether p is inside ring r (even-odd rule).
func inside(p [2]float64, r [][2]float64) bool {
	in := false
	for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
		a, b := r[i], r[j]
		if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < (b[0]-a[0])*(p[1]-a[1])/(b[1]-a[1])+a[0] {
			in = !in
		}
	}
	return in
}

// round9 rounds a reprojected coordinate to 9 decimals, a tenth of a
// millimetre: the round-off of the projection (1e-14 degrees) written out
// would count as decimals the file's author gave, and a plot written
// with 3 decimals in longitude and latitude must be judged as such.
func round9(f float64) float64 { return math.Round(f*1e9) / 1e9 }
