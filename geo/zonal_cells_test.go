package geo

import (
	"math"
	"sync"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
)

// TestCellAreas checks that the rows' cell areas kept per grid are those
// computed for each plot before, to the bit, whether computed here, found
// kept, computed by goroutines at once or past the budget.
func TestCellAreas(t *testing.T) {
	grids := []geotiff.Georef{
		{West: -80, North: 10, DX: 0.00025, DY: 0.00025, Width: 40000, Height: 40000},                               // Hansen
		{West: -80, North: 10, DX: 8.983152841195215e-05, DY: 8.983152841195215e-05, Width: 111320, Height: 111320}, // JRC
		{West: 100, North: -60, DX: 1, DY: 0.5, Width: 10, Height: 60},                                              // coarse, to the pole
		{West: 0, North: 1 << 20, DX: 1e-9, DY: 1e-9, Width: 1, Height: 1 << 40},                                    // past the budget
	}
	for _, g := range grids {
		rows := []int{0, 1, 2, g.Height / 3, g.Height - 1, -1, g.Height}
		want := make([]float64, len(rows))
		for i, row := range rows {
			_, lat := g.Center(0, row)
			want[i] = cellHa(lat, g.DX, g.DY)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 2 { // computed, then kept
					c := cellAreasOf(g)
					for i, row := range rows {
						if got := c.at(row); math.Float64bits(got) != math.Float64bits(want[i]) {
							t.Errorf("grid %+v row %d: %v ha, want %v", g, row, got, want[i])
						}
					}
				}
			})
		}
		wg.Wait()
	}
	if c := cellAreasOf(grids[3]); c.rows != nil {
		t.Errorf("a grid of %d rows got a table: want none past the budget", grids[3].Height)
	}

	// A header's NaN finds its table again rather than adding one each time.
	nan := geotiff.Georef{North: math.NaN(), DX: 1, DY: 1, Width: 1, Height: 1000}
	cellAreasOf(nan)
	cellAreaMu.Lock()
	before := cellAreaBytes
	cellAreaMu.Unlock()
	if got := cellAreasOf(nan).at(3); !math.IsNaN(got) {
		t.Errorf("NaN grid: %v ha, want NaN", got)
	}
	cellAreaMu.Lock()
	defer cellAreaMu.Unlock()
	if cellAreaBytes != before {
		t.Errorf("a grid with a NaN took %d more bytes the second time", cellAreaBytes-before)
	}
}

// ForgetCellAreas drops the rows' cell areas kept so far, so that a
// benchmark starts cold.
func ForgetCellAreas() {
	cellAreaMu.Lock()
	defer cellAreaMu.Unlock()
	cellAreaTables.Clear()
	cellAreaBytes = 0
}
