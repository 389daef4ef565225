package plotfile

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
)

// readCSV reads a CSV file (RFC 4180, as spreadsheets and ogr2ogr write
// it): UTF-8 with or without a byte order mark, its separator ',' or ';'
// (as a spreadsheet set to a decimal comma writes it), whichever its
// header uses more. See table for the columns.
func readCSV(body []byte, o Options) (*Converted, error) {
	body = bytes.TrimPrefix(body, []byte("\uFEFF"))
	if !utf8.Valid(body) {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body",
			Issue: "is not UTF-8 text: save the file as CSV in UTF-8 (\"CSV UTF-8\" in Excel)"}}
	}
	r := csv.NewReader(bytes.NewReader(body))
	r.Comma = separator(body)
	r.FieldsPerRecord = -1 // a row of another width is reported with the others
	t := &table{exactWidth: true}
	// A spreadsheet shows a record as one row however many lines a quoted
	// value in it spans, and a blank line as an empty row: a record's row
	// number is its first line less the line breaks inside values above it.
	inside := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			row := pe.StartLine - inside
			if row <= 1 {
				return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "header", Issue: "cannot be read as CSV: " + pe.Err.Error()}}
			}
			return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: fmt.Sprintf("rows[%d]", row),
				Issue: fmt.Sprintf("cannot be read as CSV (line %d, column %d): %v; a value holding the separator, a quote or a line break must be in double quotes, its quotes doubled", pe.Line, pe.Column, pe.Err)}}
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		n := line - inside
		for _, f := range rec {
			inside += strings.Count(f, "\n")
		}
		if t.header == nil {
			t.header = rec
			continue
		}
		cells := make([]cell, len(rec))
		for j, f := range rec {
			cells[j] = cell{text: f}
		}
		t.rows = append(t.rows, tableRow{n: n, cells: cells})
	}
	if t.header == nil {
		return nil, geo.Problems{{Code: geo.CodeRequired, Path: "header", Issue: "is missing: the file is empty; its first row must name the columns"}}
	}
	return readTable(t, o)
}

// separator is ';' when the first line holds more of them than of ','
// (outside quotes), else ','.
func separator(body []byte) rune {
	commas, semicolons, quoted := 0, 0, false
	for _, b := range body {
		switch {
		case b == '"':
			quoted = !quoted
		case quoted:
		case b == '\n':
			if semicolons > commas {
				return ';'
			}
			return ','
		case b == ',':
			commas++
		case b == ';':
			semicolons++
		}
	}
	if semicolons > commas {
		return ';'
	}
	return ','
}
