// Package borders holds the boundaries of the world's countries, to tell
// whether a plot lies in the country its producer declared.
//
// The boundaries are Natural Earth's admin 0 countries at 1:10m, version
// 4.1.0 (public domain), as the world-atlas package's TopoJSON quantizes
// them, with ISO 3166-1 alpha-2 codes (countries.bin.gz, made by make.sh).
// Natural Earth draws a country's overseas departments inside it (French
// Guiana, Réunion and the rest are in FR), and leaves out the territories
// too small for the scale: Find has no boundary for their codes.
package borders

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"

	"github.com/tidwall/rtree"
)

// Source names the boundaries, for evidence.
const Source = "Natural Earth admin 0 countries 1:10m v4.1.0 (world-atlas 2.0.2)"

// BufferM is how far, in metres, a plot may lie outside its country's
// boundary and still be in it. Natural Earth's 1:10m lines are generalised
// (a river border cuts its meanders, a coast its inlets) and quantized
// here to 0.0036° of longitude by 0.0017° of latitude (up to 200 m and 95 m
// off); a genuine border or coastal plot must not fail for that. 5 km
// absorbs both with room to spare and is still small against the errors
// the check is for: latitude and longitude swapped, or the wrong country,
// which put a plot tens to thousands of kilometres off.
const BufferM = 5000

// metresPerDegree is the length of a degree of latitude on a sphere of the
// Earth's mean radius: distances here are for comparing with BufferM,
// whose margin dwarfs the sphere's error.
const metresPerDegree = 6371008.8 * math.Pi / 180

// chunkEdges is how many edges of a ring share an entry of a country's
// R-tree: fewer entries to build, few edges to test per hit.
const chunkEdges = 16

//go:embed countries.bin.gz
var data []byte

// Country is one country's boundary.
type Country struct {
	Code string // ISO 3166-1 alpha-2, or XK
	Name string
	// rings are all rings of all its polygons, exteriors and holes alike
	// (Lesotho is a hole in South Africa): a point is inside when a ray
	// from it crosses them an odd number of times. A ring across the
	// antimeridian is there three times, running past ±180° and shifted
	// a turn either way (gen's unwrap): the ray runs east to 540°.
	rings [][][2]float64
	edges rtree.RTree // values: chunk
}

// chunk is up to chunkEdges edges of a ring: from position start to end.
type chunk struct{ ring, start, end int }

type world struct {
	byCode map[string]*Country
	boxes  rtree.RTree // values: *Country, one per polygon
}

var load = sync.OnceValues(func() (*world, error) { return decode(data) })

// Find returns the boundary of the country with the code, or nil when the
// boundaries have none for it (a territory too small for the scale).
func Find(code string) (*Country, error) {
	w, err := load()
	if err != nil {
		return nil, err
	}
	return w.byCode[code], nil
}

// At returns the countries whose boundary holds p (lon, lat), sorted by
// code: none at sea, two where Natural Earth's areas are claimed by both.
func At(p [2]float64) ([]*Country, error) {
	w, err := load()
	if err != nil {
		return nil, err
	}
	var out []*Country
	w.boxes.Search(p, p, func(_, _ [2]float64, v interface{}) bool {
		c := v.(*Country)
		for _, o := range out {
			if o == c {
				return true
			}
		}
		if c.Contains(p) {
			out = append(out, c)
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out, nil
}

// Contains reports whether p (lon, lat) lies inside the boundary.
func (c *Country) Contains(p [2]float64) bool {
	in := false
	c.edges.Search(p, [2]float64{540, p[1]}, func(_, _ [2]float64, v interface{}) bool {
		k := v.(chunk)
		r := c.rings[k.ring]
		for i := k.start; i < k.end; i++ {
			a, b := r[i], r[i+1]
			if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < a[0]+(p[1]-a[1])*(b[0]-a[0])/(b[1]-a[1]) {
				in = !in
			}
		}
		return true
	})
	return in
}

// Near reports whether the plot part ring (lon, lat positions: a
// polygon's exterior ring, or one point) lies within BufferM of the
// country: some of it inside, or some of it within BufferM of the
// boundary. A part straddling the border is near both countries.
func (c *Country) Near(ring [][2]float64) bool {
	if len(ring) == 0 {
		return false
	}
	if c.Contains(ring[0]) {
		return true
	}
	// ring[0] is outside: the part meets the country only if the
	// boundaries cross, or come within BufferM, or the country lies inside
	// the part; all need an edge of the country within BufferM of the
	// part's bounding box.
	lo, hi := ring[0], ring[0]
	for _, p := range ring {
		lo = [2]float64{min(lo[0], p[0]), min(lo[1], p[1])}
		hi = [2]float64{max(hi[0], p[0]), max(hi[1], p[1])}
	}
	dLat := BufferM / metresPerDegree
	// A degree of longitude is shortest at the latitude farthest from the
	// equator: the margin in longitude is widest there, and must hold it.
	kx := math.Cos(math.Min(90, math.Max(math.Abs(lo[1]), math.Abs(hi[1]))+dLat) * math.Pi / 180)
	kx = math.Max(kx, 1e-6)
	dLon := min(360, dLat/kx)
	glo := [2]float64{lo[0] - dLon, lo[1] - dLat}
	ghi := [2]float64{hi[0] + dLon, hi[1] + dLat}
	// Distances in a plane scaled to metres around the part: x shrunk by
	// the cosine of the part's latitude.
	cos := math.Cos((lo[1] + hi[1]) / 2 * math.Pi / 180)
	xy := func(p [2]float64) [2]float64 {
		return [2]float64{p[0] * cos * metresPerDegree, p[1] * metresPerDegree}
	}
	part := make([][2]float64, len(ring))
	for i, p := range ring {
		part[i] = xy(p)
	}
	near := false
	c.edges.Search(glo, ghi, func(_, _ [2]float64, v interface{}) bool {
		k := v.(chunk)
		r := c.rings[k.ring]
		if len(part) > 2 && inRing(r[k.start], ring) {
			near = true // the country lies (partly) inside the part
			return false
		}
		for i := k.start; i < k.end; i++ {
			a, b := r[i], r[i+1]
			if max(a[0], b[0]) < glo[0] || min(a[0], b[0]) > ghi[0] || max(a[1], b[1]) < glo[1] || min(a[1], b[1]) > ghi[1] {
				continue
			}
			if distToPath(xy(a), xy(b), part) <= BufferM {
				near = true
				return false
			}
		}
		return true
	})
	return near
}

// distToPath is the distance from the segment ab to the closed path part
// (one point, or a ring whose last position repeats its first).
func distToPath(a, b [2]float64, part [][2]float64) float64 {
	if len(part) == 1 {
		return distToSegment(part[0], a, b)
	}
	d := math.Inf(1)
	for i := 0; i+1 < len(part); i++ {
		p, q := part[i], part[i+1]
		if cross(a, b, p, q) {
			return 0
		}
		d = min(d, distToSegment(p, a, b), distToSegment(q, a, b), distToSegment(a, p, q), distToSegment(b, p, q))
	}
	return d
}

// distToSegment is the distance from p to the segment ab.
func distToSegment(p, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = max(0, min(1, ((p[0]-a[0])*dx+(p[1]-a[1])*dy)/l))
	}
	return math.Hypot(p[0]-a[0]-t*dx, p[1]-a[1]-t*dy)
}

// cross reports whether the segments ab and pq cross or touch.
func cross(a, b, p, q [2]float64) bool {
	d1, d2 := orient(p, q, a), orient(p, q, b)
	d3, d4 := orient(a, b, p), orient(a, b, q)
	return (d1 > 0) != (d2 > 0) && (d3 > 0) != (d4 > 0) || d1 == 0 && d2 == 0 && d3 == 0 && d4 == 0 && overlaps(a, b, p, q)
}

func orient(a, b, c [2]float64) float64 {
	return (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
}

// overlaps reports whether collinear segments ab and pq share a point.
func overlaps(a, b, p, q [2]float64) bool {
	return max(a[0], b[0]) >= min(p[0], q[0]) && max(p[0], q[0]) >= min(a[0], b[0]) &&
		max(a[1], b[1]) >= min(p[1], q[1]) && max(p[1], q[1]) >= min(a[1], b[1])
}

// inRing reports whether p lies inside the closed ring r (even-odd).
func inRing(p [2]float64, r [][2]float64) bool {
	in := false
	for i := 0; i+1 < len(r); i++ {
		a, b := r[i], r[i+1]
		if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < a[0]+(p[1]-a[1])*(b[0]-a[0])/(b[1]-a[1]) {
			in = !in
		}
	}
	return in
}

// decode reads countries.bin.gz (see gen/main.go): the quantization's scale
// and translation, then per country its code, name and polygons, each ring
// as zigzag varint deltas on the quantized grid.
func decode(gz []byte) (*world, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("borders: %w", err)
	}
	r := bufio.NewReader(zr)
	var failed error
	uv := func() uint64 {
		v, err := binary.ReadUvarint(r)
		if err != nil && failed == nil {
			failed = err
		}
		return v
	}
	sv := func() int64 {
		v, err := binary.ReadVarint(r)
		if err != nil && failed == nil {
			failed = err
		}
		return v
	}
	str := func() string {
		b := make([]byte, min(uv(), 256))
		if _, err := io.ReadFull(r, b); err != nil && failed == nil {
			failed = err
		}
		return string(b)
	}
	magic := make([]byte, 4)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "NEB1" {
		return nil, fmt.Errorf("borders: not a boundaries file")
	}
	f64 := func() float64 { return math.Float64frombits(uv()) }
	sx, sy, tx, ty := f64(), f64(), f64(), f64()
	w := &world{byCode: map[string]*Country{}}
	n := uv()
	for range min(n, 1000) {
		c := &Country{Code: str(), Name: str()}
		for range min(uv(), 1e5) {
			var plo, phi [2]float64
			for ri := range min(uv(), 1e5) {
				m := min(uv(), 1e7)
				ring := make([][2]float64, m)
				var qx, qy int64
				for i := range ring {
					qx += sv()
					qy += sv()
					ring[i] = [2]float64{float64(qx)*sx + tx, float64(qy)*sy + ty}
				}
				if failed != nil {
					return nil, fmt.Errorf("borders: %s: %w", c.Code, failed)
				}
				idx := len(c.rings)
				c.rings = append(c.rings, ring)
				for s := 0; s+1 < len(ring); s += chunkEdges {
					e := min(s+chunkEdges, len(ring)-1)
					lo, hi := ring[s], ring[s]
					for _, p := range ring[s+1 : e+1] {
						lo = [2]float64{min(lo[0], p[0]), min(lo[1], p[1])}
						hi = [2]float64{max(hi[0], p[0]), max(hi[1], p[1])}
					}
					c.edges.Insert(lo, hi, chunk{idx, s, e})
					// The box of all rings: those of a polygon across
					// the antimeridian are its copies (gen's unwrap).
					if ri == 0 && s == 0 {
						plo, phi = lo, hi
					}
					plo = [2]float64{min(plo[0], lo[0]), min(plo[1], lo[1])}
					phi = [2]float64{max(phi[0], hi[0]), max(phi[1], hi[1])}
				}
			}
			w.boxes.Insert(plo, phi, c)
		}
		if failed != nil {
			return nil, fmt.Errorf("borders: %s: %w", c.Code, failed)
		}
		w.byCode[c.Code] = c
	}
	if failed != nil || uint64(len(w.byCode)) != n {
		return nil, fmt.Errorf("borders: truncated file")
	}
	return w, nil
}
