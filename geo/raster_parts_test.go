package geo_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

// countingRaster reads pixels from a pattern and counts those asked for.
type countingRaster struct {
	pix  funcReader
	read *int
}

func (r countingRaster) ReadWindow(ctx context.Context, w geotiff.Window, dst []uint8) error {
	*r.read += w.Width * w.Height
	return r.pix.ReadWindow(ctx, w, dst)
}

// bandTiles is a band of 36 tiles of 10 x 10 degrees round the globe, from
// the equator to 10 N, of pixels of deg degrees: the tile from longitude
// west has value(west) everywhere. read counts the pixels read from them.
func bandTiles(deg float64, value func(west int) uint8, read *int) []geo.RasterTile {
	n := int(10/deg + 0.5)
	var tiles []geo.RasterTile
	for west := -180; west < 180; west += 10 {
		v := value(west)
		tiles = append(tiles, geo.RasterTile{
			Name:   fmt.Sprintf("%04d.tif", west),
			Grid:   geotiff.Georef{West: float64(west), North: 10, DX: deg, DY: deg, Width: n, Height: n},
			Reader: countingRaster{pix: func(int, int) uint8 { return v }, read: read}})
	}
	return tiles
}

// A plot across the antimeridian sent as docs/screening.md says, two polygons
// meeting at 180 and -180, has a bounding box round the globe. Its pixels
// are read from the windows of its parts, not from the band between them:
// here 2 x 10 x 100 pixels of 0.01 degree of a loss-year layer (and 2 x 20
// x 200 of a forest layer of 0.005 degree), where the band would be 36
// tiles of 1,000 x 100.
func TestAssess_RasterAcrossAntimeridian(t *testing.T) {
	var lossRead, forestRead int
	lossValue := func(west int) uint8 {
		switch west {
		case 170:
			return 22 // lost after the cutoff
		case -180:
			return 3 // lost up to the cutoff
		}
		return 99 // no pixel of the plot is here
	}
	loss := rasterLayer("loss", geo.LossYear, bandTiles(0.01, lossValue, &lossRead)...)
	forest := rasterLayer("forest", geo.Forest2020, bandTiles(0.005, func(int) uint8 { return 1 }, &forestRead)...)
	f := parseOne(t, `{"type":"MultiPolygon","coordinates":[`+
		ringsJSON(179.9, 5, 180, 6)+`,`+ringsJSON(-180, 5, -179.9, 6)+`]}`, "")
	o := assessRasters(t, f, geo.DefaultRules(), loss, forest)

	// The windows of the parts' boxes hold the pixels their sides touch
	// on the east and south too: 11 x 101 at most, 22 x 201 on the
	// forest grid.
	if want := 2 * 11 * 101; lossRead > want {
		t.Errorf("loss-year pixels read = %d, want at most %d (the parts' own windows)", lossRead, want)
	}
	if want := 2 * 22 * 201; forestRead > want {
		t.Errorf("forest pixels read = %d, want at most %d (the parts' own windows)", forestRead, want)
	}
	r := rasterOf(t, o, "loss")
	checkStats(t, r, map[uint8]int{22: 1000, 3: 1000}, 0)
	if !r.Covered || !slices.Equal(r.Tiles, []string{"-180.tif", "0170.tif"}) {
		t.Errorf("loss-year result: covered %v, tiles %v; want covered by -180.tif and 0170.tif", r.Covered, r.Tiles)
	}
	fr := rasterOf(t, o, "forest")
	checkStats(t, fr, map[uint8]int{1: 2 * 20 * 200}, 0)
	if o.Loss == nil || o.Loss.ForestLayerID != "forest" || o.Loss.Pixels != 20*200 {
		t.Errorf("loss in forest = %+v, want the 4,000 forest pixels of the part east of 180", o.Loss)
	}
}

// ringsJSON is the polygon coordinates of a rectangle.
func ringsJSON(lon0, lat0, lon1, lat1 float64) string {
	return "[" + ringJSON(lon0, lat0, lon1, lat1) + "]"
}

// Parts of a plot less than a pixel apart share the pixel between them:
// their windows overlap, and a pixel of both is read and counted once.
// Here a column of 0.01 degree pixels from 10.05 holds the east side of
// one part on its west edge and the other part's west side; its centres
// are in the second part only.
func TestZonalStats_PartsSharingAPixel(t *testing.T) {
	var read int
	tiles := bandTiles(0.01, func(int) uint8 { return 7 }, &read)
	f := parseOne(t, `{"type":"MultiPolygon","coordinates":[`+
		ringsJSON(10, 5, 10.05, 5.1)+`,`+ringsJSON(10.053, 5, 10.1, 5.1)+`,`+ringsJSON(10.2, 5, 10.3, 5.1)+`]}`, "")
	s, err := geo.ZonalStats(context.Background(), f.Geometry, 0, tiles...)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pixels[7] != 5*10+5*10+10*10 || s.NoDataPixels != 0 {
		t.Errorf("pixels = %d of value 7 and %d nodata, want 200 and 0", s.Pixels[7], s.NoDataPixels)
	}
	// The first two parts' windows merged, 11 x 11; the third apart, 11 x 11.
	if read != 11*11+11*11 {
		t.Errorf("pixels read = %d, want %d", read, 11*11+11*11)
	}
}
