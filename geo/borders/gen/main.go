// Command gen turns Natural Earth's admin 0 countries, as the world-atlas
// package's TopoJSON (countries-10m.json), into countries.bin.gz, the
// boundaries package borders embeds. make.sh runs it; it is run by hand
// when the source changes, never at build time.
//
// Usage: go run ./geo/borders/gen TOPOJSON ISO_3166_1_JSON OUT
//
// ISO_3166_1_JSON is iso-codes' iso_3166-1.json (Debian package
// iso-codes): it maps the TopoJSON's ISO 3166-1 numeric ids to alpha-2
// codes and gives the countries' names.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
)

// unnumbered gives the alpha-2 codes of the features world-atlas leaves
// without an ISO numeric id (Natural Earth's ISO_N3 "-99"): Kosovo (XK, the
// code the EU information system accepts), areas ISO counts as part of a
// country, and areas whose land is claimed by two (given to both, so that
// a plot there passes with either). The rest (reefs, banks and the Spratly
// Islands) get no code: a plot there lies in no country.
var unnumbered = map[string][]string{
	"Kosovo":                  {"XK"},
	"Somaliland":              {"SO"},
	"N. Cyprus":               {"CY"},
	"Cyprus U.N. Buffer Zone": {"CY"},
	"Dhekelia":                {"CY", "GB"},
	"Akrotiri":                {"CY", "GB"},
	"USNB Guantanamo Bay":     {"CU", "US"},
	"Baikonur":                {"KZ"},
	"Siachen Glacier":         {"IN", "PK"},
	"Coral Sea Is.":           {"AU"},
	"Clipperton I.":           {"FR"},
	// "Indian Ocean Ter." is Christmas Island and the Cocos (Keeling)
	// Islands: split by longitude in main.
}

// names overrides iso-codes' names where they are long official forms.
var names = map[string]string{"XK": "Kosovo"}

type topology struct {
	Transform struct {
		Scale     [2]float64 `json:"scale"`
		Translate [2]float64 `json:"translate"`
	} `json:"transform"`
	Arcs    [][][2]int64 `json:"arcs"`
	Objects struct {
		Countries struct {
			Geometries []struct {
				Type       string          `json:"type"`
				ID         string          `json:"id"`
				Arcs       json.RawMessage `json:"arcs"`
				Properties struct {
					Name string `json:"name"`
				} `json:"properties"`
			} `json:"geometries"`
		} `json:"countries"`
	} `json:"objects"`
}

type ring [][2]int64
type polygon []ring

type country struct {
	code, name string
	polygons   []polygon
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gen TOPOJSON ISO_3166_1_JSON OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(topoPath, isoPath, outPath string) error {
	var t topology
	if err := readJSON(topoPath, &t); err != nil {
		return err
	}
	var iso struct {
		Countries []struct {
			Alpha2     string `json:"alpha_2"`
			Numeric    string `json:"numeric"`
			Name       string `json:"name"`
			CommonName string `json:"common_name"`
		} `json:"3166-1"`
	}
	if err := readJSON(isoPath, &iso); err != nil {
		return err
	}
	byNumeric := map[string]string{}
	for _, c := range iso.Countries {
		byNumeric[c.Numeric] = c.Alpha2
		if _, ok := names[c.Alpha2]; !ok {
			names[c.Alpha2] = c.Name
			if c.CommonName != "" {
				names[c.Alpha2] = c.CommonName
			}
		}
	}

	// Arcs are delta-encoded on the quantized grid: make them absolute.
	for _, a := range t.Arcs {
		for i := 1; i < len(a); i++ {
			a[i][0] += a[i-1][0]
			a[i][1] += a[i-1][1]
		}
	}
	countries := map[string]*country{}
	add := func(code string, ps []polygon) {
		c := countries[code]
		if c == nil {
			c = &country{code: code, name: names[code]}
			countries[code] = c
		}
		c.polygons = append(c.polygons, ps...)
	}
	for _, g := range t.Objects.Countries.Geometries {
		var ps []polygon
		switch g.Type {
		case "Polygon":
			var rings [][]int
			if err := json.Unmarshal(g.Arcs, &rings); err != nil {
				return err
			}
			ps = []polygon{stitch(t.Arcs, rings)}
		case "MultiPolygon":
			var polys [][][]int
			if err := json.Unmarshal(g.Arcs, &polys); err != nil {
				return err
			}
			for _, rings := range polys {
				ps = append(ps, stitch(t.Arcs, rings))
			}
		default:
			return fmt.Errorf("%s: geometry type %q", g.Properties.Name, g.Type)
		}
		for i, p := range ps {
			ps[i] = unwrap(p)
		}
		switch {
		case g.ID != "":
			code, ok := byNumeric[g.ID]
			if !ok {
				return fmt.Errorf("%s: no alpha-2 code for numeric id %s", g.Properties.Name, g.ID)
			}
			add(code, ps)
		case g.Properties.Name == "Indian Ocean Ter.":
			for _, p := range ps {
				code := "CX" // Christmas Island, 105.6° E
				if float64(p[0][0][0])*t.Transform.Scale[0]+t.Transform.Translate[0] < 100 {
					code = "CC" // the Cocos (Keeling) Islands, 96.8° E
				}
				add(code, []polygon{p})
			}
		default:
			codes, ok := unnumbered[g.Properties.Name]
			if !ok {
				fmt.Fprintf(os.Stderr, "gen: %s has no code: left out\n", g.Properties.Name)
			}
			for _, code := range codes {
				add(code, ps)
			}
		}
	}
	codes := make([]string, 0, len(countries))
	for code, c := range countries {
		if c.name == "" {
			return fmt.Errorf("%s: no name", code)
		}
		codes = append(codes, code)
	}
	sort.Strings(codes)

	f, err := os.Create(outPath)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(zw)
	var buf [binary.MaxVarintLen64]byte
	uv := func(v uint64) { w.Write(buf[:binary.PutUvarint(buf[:], v)]) }
	sv := func(v int64) { w.Write(buf[:binary.PutVarint(buf[:], v)]) }
	f64 := func(v float64) { uv(math.Float64bits(v)) }
	str := func(s string) { uv(uint64(len(s))); w.WriteString(s) }

	w.WriteString("NEB1")
	f64(t.Transform.Scale[0])
	f64(t.Transform.Scale[1])
	f64(t.Transform.Translate[0])
	f64(t.Transform.Translate[1])
	uv(uint64(len(codes)))
	points := 0
	for _, code := range codes {
		c := countries[code]
		str(c.code)
		str(c.name)
		uv(uint64(len(c.polygons)))
		for _, p := range c.polygons {
			uv(uint64(len(p)))
			for _, r := range p {
				uv(uint64(len(r)))
				var prev [2]int64
				for _, q := range r {
					sv(q[0] - prev[0])
					sv(q[1] - prev[1])
					prev = q
				}
				points += len(r)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gen: %d countries, %d points\n", len(codes), points)
	return nil
}

// stitch joins the arcs of each ring: arc i, or ^i for arc i reversed. The
// arcs of a ring share their ends: each after the first drops its first
// position.
func stitch(arcs [][][2]int64, rings [][]int) polygon {
	var p polygon
	for _, refs := range rings {
		var r ring
		for _, ref := range refs {
			a := arcs[max(ref, ^ref)]
			if ref < 0 {
				a = slices.Clone(a)
				slices.Reverse(a)
			}
			if len(r) > 0 {
				a = a[1:]
			}
			r = append(r, a...)
		}
		p = append(p, r)
	}
	return p
}

// turn is 360° on the quantized grid of longitude (-180° is 0, 180° is
// 99999).
const turn = 99999

// unwrap makes the rings of p that cross the antimeridian (world-atlas
// keeps Fiji's and Chukotka's whole, with sides jumping from 180° to
// -180°) continuous, running past ±180°, and adds copies of each shifted a
// turn east and west: a point at 179.9° lies in one copy, at -179.9° in
// another, by plain ray casting. A ring round the pole (Antarctica) is
// closed along the grid's southmost parallel.
func unwrap(p polygon) polygon {
	var out polygon
	for _, r := range p {
		if !crosses(r) {
			out = append(out, r)
			continue
		}
		var shift int64
		u := make(ring, len(r))
		for i, q := range r {
			if i > 0 {
				switch d := q[0] + shift - u[i-1][0]; {
				case d > turn/2:
					shift -= turn
				case d < -turn/2:
					shift += turn
				}
			}
			u[i] = [2]int64{q[0] + shift, q[1]}
		}
		if shift != 0 {
			first, last := u[0], u[len(u)-1]
			u = append(u, [2]int64{last[0], 0}, [2]int64{first[0], 0}, first)
		}
		for _, by := range []int64{0, turn, -turn} {
			c := make(ring, len(u))
			for i, q := range u {
				c[i] = [2]int64{q[0] + by, q[1]}
			}
			out = append(out, c)
		}
	}
	return out
}

// crosses reports whether a side of r jumps more than half a turn.
func crosses(r ring) bool {
	for i := 1; i < len(r); i++ {
		if d := r[i][0] - r[i-1][0]; d > turn/2 || d < -turn/2 {
			return true
		}
	}
	return false
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
