package repair

import (
	"strconv"

	"github.com/eudr/eudr/geo"
)

// maxWritten caps the decimals written: past 17 a float64 holds no more.
const maxWritten = 17

// WriteGeometry returns r.Geometry as a GeoJSON geometry object, every
// coordinate written with r.Decimals decimals: 6 for a rebuilt plot (the
// grid it was built on), else as many as the most the plot was sent with,
// so that geo.Check reads the same precision from it.
func (r Result) WriteGeometry() []byte {
	g := r.Geometry
	dec := min(max(r.Decimals, 0), maxWritten)
	b := append([]byte(`{"type":`), strconv.Quote(g.Type)...)
	b = append(b, `,"coordinates":`...)
	pos := func(b []byte, p geo.Position) []byte {
		b = append(b, '[')
		b = strconv.AppendFloat(b, p[0], 'f', dec, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, p[1], 'f', dec, 64)
		return append(b, ']')
	}
	rings := func(b []byte, poly geo.Polygon) []byte {
		b = append(b, '[')
		for j, r := range poly {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for k, p := range r {
				if k > 0 {
					b = append(b, ',')
				}
				b = pos(b, p)
			}
			b = append(b, ']')
		}
		return append(b, ']')
	}
	switch g.Type {
	case geo.TypePoint:
		b = pos(b, g.Points[0])
	case geo.TypeMultiPoint:
		b = append(b, '[')
		for i, p := range g.Points {
			if i > 0 {
				b = append(b, ',')
			}
			b = pos(b, p)
		}
		b = append(b, ']')
	case geo.TypePolygon:
		b = rings(b, g.Polygons[0])
	default:
		b = append(b, '[')
		for i, poly := range g.Polygons {
			if i > 0 {
				b = append(b, ',')
			}
			b = rings(b, poly)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
