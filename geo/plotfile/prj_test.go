package plotfile

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// The inverse transverse Mercator against PROJ (GDAL 3.6's gdaltransform
// -s_srs EPSG:4326 -t_srs EPSG:326ZZ / EPSG:327ZZ of the longitudes and
// latitudes): near and far from the central meridian (6.5° off at 62°N),
// on the equator, across it, in the south.
func TestTransverseMercatorInverse(t *testing.T) {
	cases := []struct {
		prj      string
		x, y     float64
		lon, lat float64
	}{
		{utm30N, 610660.671415724, 608136.999501276, -2.001, 5.501},
		{utm30N, 102068.759588981, 641250.417186758, -6.592, 5.79},
		{utm30N, 774891.163824139, 5011129.5795751, 0.5, 45.2},
		{utm30N, 499999.999999999, 0, -3, 0},
		{utm30N, 162751.646271298, 6918986.64989841, -9.5, 62.25},
		{utm30N, 1180071.93385072, -11.1163715489395, 3.1, -0.0001},
		{utm21S, 171045.878193833, 8781263.52826066, -60.01, -11.01},
		{utm21S, 7008.21688354836, 8835659.7739918, -61.501, -10.501},
		{utm21S, 1057712.81932711, 6277127.5990396, -51, -33.5},
	}
	for _, c := range cases {
		p, err := projectionOf(c.prj)
		if err != nil {
			t.Fatal(err)
		}
		lon, lat := p.lonLat(c.x, c.y)
		if math.Abs(lon-c.lon) > 1e-9 || math.Abs(lat-c.lat) > 1e-9 {
			t.Errorf("(%v, %v) is (%.12f, %.12f), want (%v, %v)", c.x, c.y, lon, lat, c.lon, c.lat)
		}
	}
}

const (
	utm30N = `PROJCS["WGS_1984_UTM_Zone_30N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],PARAMETER["False_Easting",500000.0],PARAMETER["False_Northing",0.0],PARAMETER["Central_Meridian",-3.0],PARAMETER["Scale_Factor",0.9996],PARAMETER["Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]`
	// OGC WKT 1 of UTM 21S, as EPSG gives it.
	utm21S = `PROJCS["WGS 84 / UTM zone 21S",
    GEOGCS["WGS 84", DATUM["WGS_1984", SPHEROID["WGS 84",6378137,298.257223563, AUTHORITY["EPSG","7030"]], AUTHORITY["EPSG","6326"]],
        PRIMEM["Greenwich",0, AUTHORITY["EPSG","8901"]], UNIT["degree",0.0174532925199433, AUTHORITY["EPSG","9122"]], AUTHORITY["EPSG","4326"]],
    PROJECTION["Transverse_Mercator"], PARAMETER["latitude_of_origin",0], PARAMETER["central_meridian",-57],
    PARAMETER["scale_factor",0.9996], PARAMETER["false_easting",500000], PARAMETER["false_northing",10000000],
    UNIT["metre",1, AUTHORITY["EPSG","9001"]], AXIS["Easting",EAST], AXIS["Northing",NORTH], AUTHORITY["EPSG","32721"]]`
)

func TestProjectionOf(t *testing.T) {
	for _, prj := range []string{
		`GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`,
		`GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433],AUTHORITY["EPSG","4326"]]`,
	} {
		if p, err := projectionOf(prj); err != nil || p != (geographic{}) {
			t.Errorf("%s: %v, %v; want WGS 84 as it is", prj, p, err)
		}
	}
	// A UTM zone by its name alone.
	p, err := projectionOf(`PROJCS["WGS 84 / UTM zone 30N",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]]]]`)
	if tm, ok := p.(transverseMercator); err != nil || !ok || tm.lon0 != -3 || tm.k0 != 0.9996 || tm.e0 != 500000 || tm.n0 != 0 {
		t.Errorf("UTM 30N by name: %+v, %v", p, err)
	}

	refused := map[string]string{
		// Another datum.
		`PROJCS["ETRS89 / UTM zone 32N",GEOGCS["ETRS89",DATUM["European_Terrestrial_Reference_System_1989",SPHEROID["GRS 1980",6378137,298.257222101]]],PROJECTION["Transverse_Mercator"],PARAMETER["central_meridian",9],UNIT["metre",1]]`: "ETRS89 / UTM zone 32N",
		`GEOGCS["GCS_SIRGAS_2000",DATUM["D_SIRGAS_2000",SPHEROID["GRS_1980",6378137.0,298.257222101]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`:                                                                           "GCS_SIRGAS_2000",
		// Another projection.
		`PROJCS["WGS 84 / Pseudo-Mercator",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]]],PROJECTION["Mercator_1SP"],PARAMETER["central_meridian",0],UNIT["metre",1]]`: "WGS 84 / Pseudo-Mercator",
		// WKT 2, which GDAL does not write to a .prj.
		`PROJCRS["WGS 84 / UTM zone 30N",BASEGEOGCRS["WGS 84",DATUM["World Geodetic System 1984",ELLIPSOID["WGS 84",6378137,298.257223563]]]]`: "WGS 84 / UTM zone 30N",
	}
	for prj, name := range refused {
		_, err := projectionOf(prj)
		var es errSystem
		if !errors.As(err, &es) || !strings.Contains(err.Error(), "'"+name+"'") || !strings.Contains(err.Error(), "EPSG:4326") {
			t.Errorf("%s: %v, want refused naming %q", prj, err, name)
		}
	}
	for _, prj := range []string{"", "not WKT", `GEOGCS["x"`, `GEOGCS["x"]]`, strings.Repeat("A[", 100)} {
		if _, err := projectionOf(prj); err == nil || errors.As(err, new(errSystem)) {
			t.Errorf("%q: %v, want not WKT", prj, err)
		}
	}
}
