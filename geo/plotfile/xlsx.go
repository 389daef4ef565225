package plotfile

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/eudr/eudr/geo"
)

// xlsxMaxUnzipped bounds what a workbook may unzip to: a few kilobytes
// of compressed XML must not take the appliance's memory.
const xlsxMaxUnzipped = 256 << 20

// readXLSX reads a sheet of an Excel workbook (.xlsx), the first unless
// o.Sheet names another (letter case aside), with
// github.com/xuri/excelize/v2. Its columns are as a CSV file's (table);
// a numeric cell is read as its number, unless it is shown otherwise than
// as a plain number (a date, a percentage), then as the text it shows.
func readXLSX(body []byte, o Options) (*Converted, error) {
	f, err := excelize.OpenReader(bytes.NewReader(body), excelize.Options{UnzipSizeLimit: xlsxMaxUnzipped})
	if err != nil {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body",
			Issue: "is not an Excel workbook (.xlsx) that can be read: " + err.Error() + "; an .xls or password-protected file must be saved as .xlsx first"}}
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, geo.Problems{{Code: geo.CodeRequired, Path: "body", Issue: "is a workbook without sheets"}}
	}
	sheet := sheets[0]
	if o.Sheet != "" {
		sheet = ""
		for _, s := range sheets {
			if strings.EqualFold(s, o.Sheet) {
				sheet = s
			}
		}
		if sheet == "" {
			return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "sheet",
				Issue: fmt.Sprintf("the workbook has no sheet %q; its sheets are %s", o.Sheet, quoteList(sheets))}}
		}
	}
	shown, err := f.GetRows(sheet)
	if err != nil {
		return nil, sheetError(sheet, err)
	}
	raw, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		return nil, sheetError(sheet, err)
	}
	t := &table{}
	for i, texts := range shown {
		if t.header == nil {
			if blankTexts(texts) {
				continue // rows above the header
			}
			t.header = texts
			continue
		}
		cells := make([]cell, len(texts))
		for j, text := range texts {
			cells[j] = cell{text: text}
			if i >= len(raw) || j >= len(raw[i]) {
				continue
			}
			v, err := strconv.ParseFloat(raw[i][j], 64)
			if err != nil || !plainNumber(text) {
				continue
			}
			if name, err := excelize.CoordinatesToCellName(j+1, i+1); err == nil {
				if ct, err := f.GetCellType(sheet, name); err == nil && (ct == excelize.CellTypeNumber || ct == excelize.CellTypeUnset) {
					cells[j].num, cells[j].isNum = v, true
				}
			}
		}
		t.rows = append(t.rows, tableRow{n: i + 1, cells: cells})
	}
	if t.header == nil {
		return nil, geo.Problems{{Code: geo.CodeRequired, Path: "header",
			Issue: fmt.Sprintf("is missing: sheet %q is empty; its first row must name the columns", sheet)}}
	}
	return readTable(t, o)
}

func sheetError(sheet string, err error) error {
	return geo.Problems{{Code: geo.CodeInvalidValue, Path: "body", Issue: fmt.Sprintf("sheet %q cannot be read: %v", sheet, err)}}
}

// plainNumber reports whether a cell shows a number as it is, with
// perhaps a decimal comma or digit grouping, not as a date or percentage.
func plainNumber(shown string) bool {
	s := strings.NewReplacer(",", "", " ", "", "\u00a0", "").Replace(strings.TrimSpace(shown))
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func blankTexts(texts []string) bool {
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			return false
		}
	}
	return true
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
