package plotfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/ianaindex"
)

// A Shapefile's .dbf: a dBase III table, one record per shape. Text is in
// the code page the .cpg names; without one (GDAL writes none by default,
// and recodes to ISO-8859-1), text that is valid UTF-8 is read as UTF-8,
// other text as Windows-1252, of which ISO-8859-1's letters are a part.

type dbfField struct {
	name string
	typ  byte // C text, N and F numbers, L logical, D date, others text
	size int
}

// dbfValue is a cell: its text, and its value when its field is typed
// (a number, a logical), nil when blank or text.
type dbfValue struct {
	text  string
	typed any
}

type dbfTable struct {
	fields  []dbfField
	records [][]dbfValue
	deleted []bool
}

func readDBF(b []byte, cpg string) (*dbfTable, error) {
	if len(b) < 32 {
		return nil, errors.New("not a .dbf file (shorter than its header)")
	}
	n := int64(binary.LittleEndian.Uint32(b[4:]))
	headerLen := int(binary.LittleEndian.Uint16(b[8:]))
	recordLen := int(binary.LittleEndian.Uint16(b[10:]))
	if headerLen > len(b) || headerLen < 33 {
		return nil, errors.New("not a .dbf file (its header length is wrong)")
	}
	decode := dbfDecoder(cpg, b[headerLen:])
	t := &dbfTable{}
	width := 1 // the deletion flag
	for off := 32; off+32 <= headerLen && b[off] != 0x0D; off += 32 {
		name := b[off : off+11]
		if i := strings.IndexByte(string(name), 0); i >= 0 {
			name = name[:i]
		}
		f := dbfField{name: strings.TrimSpace(decode(name)), typ: b[off+11], size: int(b[off+16])}
		t.fields = append(t.fields, f)
		width += f.size
	}
	if width > recordLen {
		return nil, fmt.Errorf("the .dbf's fields take %d bytes, more than its records' %d", width, recordLen)
	}
	if int64(headerLen)+n*int64(recordLen) > int64(len(b)) {
		return nil, fmt.Errorf("the .dbf is cut short: it says it holds %d records", n)
	}
	for i := 0; i < int(n); i++ {
		rec := b[headerLen+i*recordLen : headerLen+(i+1)*recordLen]
		t.deleted = append(t.deleted, rec[0] == '*')
		values := make([]dbfValue, len(t.fields))
		off := 1
		for k, f := range t.fields {
			values[k] = dbfCell(f.typ, decode(rec[off:off+f.size]))
			off += f.size
		}
		t.records = append(t.records, values)
	}
	return t, nil
}

// dbfCell is a cell's value by its field's type.
func dbfCell(typ byte, s string) dbfValue {
	s = strings.TrimSpace(strings.TrimRight(s, "\x00"))
	v := dbfValue{text: s}
	if s == "" {
		return v
	}
	switch typ {
	case 'N', 'F':
		if strings.Trim(s, "*") == "" {
			v.text = "" // GDAL's null number
		} else if f, err := strconv.ParseFloat(s, 64); err == nil && finite(f) {
			v.typed = f
		}
	case 'L':
		switch s {
		case "T", "t", "Y", "y":
			v.typed = true
		case "F", "f", "N", "n":
			v.typed = false
		default: // '?': not set
			v.text = ""
		}
	case 'D':
		if len(s) == 8 {
			v.text = s[:4] + "-" + s[4:6] + "-" + s[6:]
		}
	}
	return v
}

// dbfDecoder turns the .dbf's bytes into text, by the .cpg when it names
// a code page this knows, else by looking at the records.
func dbfDecoder(cpg string, records []byte) func([]byte) string {
	if enc := codePage(cpg); enc != nil {
		if enc == encoding.Nop {
			return func(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }
		}
		d := enc.NewDecoder()
		return func(b []byte) string {
			s, err := d.Bytes(b)
			if err != nil {
				return strings.ToValidUTF8(string(b), "\uFFFD")
			}
			return string(s)
		}
	}
	if utf8.Valid(records) {
		return func(b []byte) string { return string(b) }
	}
	d := charmap.Windows1252.NewDecoder()
	return func(b []byte) string {
		s, _ := d.Bytes(b) // every byte is a character of Windows-1252
		return string(s)
	}
}

// codePage is the encoding a .cpg names ("UTF-8", "1252", "ISO-8859-1",
// "CP1252"), encoding.Nop for UTF-8, nil when it names none this knows.
func codePage(cpg string) encoding.Encoding {
	label := strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(cpg, "\ufeff")))
	if label == "" {
		return nil
	}
	switch strings.ReplaceAll(label, "-", "") {
	case "UTF8", "65001":
		return encoding.Nop
	}
	digits := strings.TrimLeft(label, "ACDINOPSW -_") // ANSI, CP, WINDOWS
	if _, err := strconv.Atoi(digits); err == nil {
		switch {
		case strings.HasPrefix(digits, "125"):
			label = "windows-" + digits
		case strings.HasPrefix(digits, "8859"):
			label = "ISO-8859-" + strings.TrimPrefix(strings.TrimPrefix(digits, "8859"), "0")
		default:
			label = "IBM" + digits
		}
	}
	enc, err := ianaindex.IANA.Encoding(label)
	if err != nil || enc == nil {
		return nil
	}
	return enc
}

func be32(b []byte, off int) uint32 { return binary.BigEndian.Uint32(b[off:]) }

func le32(b []byte, off int) int32 { return int32(binary.LittleEndian.Uint32(b[off:])) }

func lef64(b []byte, off int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(b[off:]))
}
