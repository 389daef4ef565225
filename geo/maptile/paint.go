package maptile

import (
	"image"
	"image/color"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

// Palette is the colour of each pixel value of a layer on the map;
// transparent where the map shows nothing.
type Palette [256]color.NRGBA

// Colours of the palettes: loss after the EUDR cutoff in a red ramp that
// darkens with the year, loss before it in a muted orange that recedes
// behind the red, forest in translucent green so the base map shows
// through, alerts in magenta.
var (
	lossEarliest = color.NRGBA{R: 255, G: 96, B: 64, A: 230}  // 2021
	lossLatest   = color.NRGBA{R: 140, G: 0, B: 24, A: 240}   // lossRampYears later and after
	lossBefore   = color.NRGBA{R: 214, G: 150, B: 90, A: 140} // 2001-2020
	forest       = color.NRGBA{R: 34, G: 139, B: 34, A: 150}
	alert        = color.NRGBA{R: 200, G: 0, B: 160, A: 220}
)

// lossRampYears is how many years after the cutoff the red ramp spans:
// 2021 is its lightest red, 2030 and later its darkest.
const lossRampYears = 9

// PaletteOf returns the palette of a raster layer kind. A tile's nodata
// value, when it has one, is set transparent by the caller (WithNoData).
func PaletteOf(kind geo.LayerKind) *Palette {
	var p Palette
	switch kind {
	case geo.LossYear:
		for v := 1; v < 256; v++ {
			if v <= geo.LossCutoffValue {
				p[v] = lossBefore
				continue
			}
			p[v] = mix(lossEarliest, lossLatest, float64(min(v-geo.LossCutoffValue-1, lossRampYears))/lossRampYears)
		}
	case geo.Forest2020:
		// A forest-2020 layer is a mask (not 0 is forest), as screening
		// reads it: every forest pixel is the same green.
		for v := 1; v < 256; v++ {
			p[v] = forest
		}
	case geo.Alerts:
		for v := 1; v < 256; v++ {
			p[v] = alert
		}
	}
	return &p
}

// WithNoData returns p with value v transparent.
func (p *Palette) WithNoData(v uint8) *Palette {
	q := *p
	q[v] = color.NRGBA{}
	return &q
}

func mix(a, b color.NRGBA, f float64) color.NRGBA {
	m := func(x, y uint8) uint8 { return uint8(float64(x) + (float64(y)-float64(x))*f + 0.5) }
	return color.NRGBA{R: m(a.R, b.R), G: m(a.G, b.G), B: m(a.B, b.B), A: m(a.A, b.A)}
}

// NewImage returns a fully transparent map tile image.
func NewImage() *image.NRGBA { return image.NewNRGBA(image.Rect(0, 0, Size, Size)) }

// Paint colours the pixels of img whose samples s fall in win, px being
// the source pixels of win row by row, through palette p. Output pixels
// whose samples lie outside win are left as they are, so a tile can be
// painted from several windows (one per GeoTIFF, or one per source row).
func Paint(img *image.NRGBA, s *Samples, win geotiff.Window, px []uint8, p *Palette) {
	for j, r := range s.Rows {
		if r < win.Row || r >= win.Row+win.Height {
			continue
		}
		src := px[(r-win.Row)*win.Width:]
		dst := img.Pix[j*img.Stride:]
		for i, c := range s.Cols {
			if c < win.Col || c >= win.Col+win.Width {
				continue
			}
			if col := p[src[c-win.Col]]; col.A != 0 {
				dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = col.R, col.G, col.B, col.A
			}
		}
	}
}
