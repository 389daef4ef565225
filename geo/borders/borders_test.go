package borders

import (
	"math"
	"strings"
	"testing"
)

// square is a closed ring of side m metres centred on c (lon, lat).
func square(c [2]float64, m float64) [][2]float64 {
	dy := m / 2 / metresPerDegree
	dx := dy / math.Cos(c[1]*math.Pi/180)
	return [][2]float64{{c[0] - dx, c[1] - dy}, {c[0] + dx, c[1] - dy}, {c[0] + dx, c[1] + dy}, {c[0] - dx, c[1] + dy}, {c[0] - dx, c[1] - dy}}
}

func find(t *testing.T, code string) *Country {
	t.Helper()
	c, err := Find(code)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Fatalf("no boundary for %s", code)
	}
	return c
}

func codesAt(t *testing.T, p [2]float64) string {
	t.Helper()
	cs, err := At(p)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, c := range cs {
		codes = append(codes, c.Code)
	}
	return strings.Join(codes, " ")
}

func TestAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    [2]float64
		want string
	}{
		{"Kumasi", [2]float64{-1.62, 6.69}, "GH"},
		{"Abidjan", [2]float64{-4.02, 5.36}, "CI"},
		{"Mato Grosso", [2]float64{-55, -12}, "BR"},
		{"Mato Grosso, axes swapped: South Atlantic", [2]float64{-12, -55}, ""},
		{"Pristina", [2]float64{21.16, 42.66}, "XK"},
		{"Maseru, in the hole Lesotho makes in South Africa", [2]float64{27.48, -29.31}, "LS"},
		{"Bloemfontein", [2]float64{26.21, -29.12}, "ZA"},
		{"Cayenne: French Guiana is drawn in France", [2]float64{-52.4, 4.8}, "FR"},
		{"Jakarta", [2]float64{106.85, -6.2}, "ID"},
		{"Gulf of Guinea", [2]float64{0, 0}, ""},
		{"Chukotka west of 180°", [2]float64{179.995, 67}, "RU"},
		{"Chukotka east of 180°", [2]float64{-179.995, 67}, "RU"},
		{"Taveuni west of 180°", [2]float64{179.995, -16.8}, "FJ"},
		{"Taveuni east of 180°", [2]float64{-179.995, -16.8}, "FJ"},
		{"the Pacific at 180°", [2]float64{179.995, 0}, ""},
		{"Antarctica, a ring round the pole", [2]float64{0, -80}, "AQ"},
		{"the Southern Ocean", [2]float64{0, -60}, ""},
	} {
		if got := codesAt(t, tc.p); got != tc.want {
			t.Errorf("%s %v: in %q, want %q", tc.name, tc.p, got, tc.want)
		}
	}
}

func TestFindNames(t *testing.T) {
	if c := find(t, "CI"); c.Name != "Côte d'Ivoire" {
		t.Errorf("CI is named %q", c.Name)
	}
	if c := find(t, "XK"); c.Name != "Kosovo" {
		t.Errorf("XK is named %q", c.Name)
	}
	// Tokelau is too small for 1:10m: no boundary.
	if c, err := Find("TK"); err != nil || c != nil {
		t.Errorf("Find(TK) = %v, %v; want none", c, err)
	}
}

// borderLon bisects between lon a (in country in) and b (in out) along
// latitude lat for where in's boundary is, to 1 m.
func borderLon(t *testing.T, in *Country, a, b, lat float64) float64 {
	t.Helper()
	if !in.Contains([2]float64{a, lat}) || in.Contains([2]float64{b, lat}) {
		t.Fatalf("%s: %v in, %v out does not hold", in.Code, a, b)
	}
	for math.Abs(a-b) > 1e-5 {
		m := (a + b) / 2
		if in.Contains([2]float64{m, lat}) {
			a = m
		} else {
			b = m
		}
	}
	return a
}

func TestNear(t *testing.T) {
	gh, ci, br := find(t, "GH"), find(t, "CI"), find(t, "BR")
	kumasi := square([2]float64{-1.62, 6.69}, 300)
	if !gh.Near(kumasi) {
		t.Error("a plot in Kumasi is not near Ghana")
	}
	if ci.Near(kumasi) {
		t.Error("a plot in Kumasi is near Côte d'Ivoire")
	}

	// The border of Ghana and Côte d'Ivoire at 7.5° N, and plots east
	// (Ghana) and west (Côte d'Ivoire) of it.
	const lat = 7.5
	x := borderLon(t, gh, -2.5, -3.5, lat)
	deg := func(m float64) float64 { return m / metresPerDegree / math.Cos(lat*math.Pi/180) }
	for _, tc := range []struct {
		name   string
		ring   [][2]float64
		gh, ci bool
	}{
		{"500 m into Ghana", square([2]float64{x + deg(500), lat}, 100), true, true},
		{"500 m into Côte d'Ivoire", square([2]float64{x - deg(500), lat}, 100), true, true},
		{"astride the border", square([2]float64{x, lat}, 2000), true, true},
		{"a point 500 m into Côte d'Ivoire", [][2]float64{{x - deg(500), lat}}, true, true},
		{"20 km into Ghana", square([2]float64{x + deg(20000), lat}, 100), true, false},
		{"20 km into Côte d'Ivoire", square([2]float64{x - deg(20000), lat}, 100), false, true},
		{"a point 20 km into Côte d'Ivoire", [][2]float64{{x - deg(20000), lat}}, false, true},
		{"a 60 km plot round a point 20 km into Côte d'Ivoire", square([2]float64{x - deg(20000), lat}, 60000), true, true},
	} {
		if got := gh.Near(tc.ring); got != tc.gh {
			t.Errorf("%s: near Ghana %v, want %v", tc.name, got, tc.gh)
		}
		if got := ci.Near(tc.ring); got != tc.ci {
			t.Errorf("%s: near Côte d'Ivoire %v, want %v", tc.name, got, tc.ci)
		}
	}

	// A plot in Mato Grosso, and the same with its axes swapped.
	mt := square([2]float64{-55, -12}, 1000)
	swapped := make([][2]float64, len(mt))
	for i, p := range mt {
		swapped[i] = [2]float64{p[1], p[0]}
	}
	if !br.Near(mt) || br.Near(swapped) {
		t.Errorf("Brazil: near the plot %v, near it swapped %v; want true, false", br.Near(mt), br.Near(swapped))
	}

	// A country wholly inside a plot: the Vatican in a plot round Rome.
	if va := find(t, "VA"); !va.Near(square([2]float64{12.45, 41.9}, 50000)) {
		t.Error("the Vatican is not near a plot holding it")
	}
}

func BenchmarkNear(b *testing.B) {
	gh, err := Find("GH")
	if err != nil {
		b.Fatal(err)
	}
	in, near := square([2]float64{-1.62, 6.69}, 300), square([2]float64{-3.2, 7.5}, 300)
	b.ResetTimer()
	for range b.N {
		gh.Near(in)
		gh.Near(near)
	}
}

func BenchmarkDecode(b *testing.B) {
	for range b.N {
		if _, err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
