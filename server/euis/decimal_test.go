package euis_test

import (
	"encoding/json"
	"testing"

	"github.com/eudr/eudr/server/euis"
)

// TestDecimal_JSON: a Decimal reads a JSON number as its text, writes it
// back unchanged, and refuses anything else as a wrongly typed value.
func TestDecimal_JSON(t *testing.T) {
	for _, in := range []string{"9999999999.999999", "0", "12.50", "1e3", "-1", "1E-7"} {
		var d euis.Decimal
		if err := json.Unmarshal([]byte(in), &d); err != nil || string(d) != in {
			t.Errorf("Unmarshal %s: %q %v", in, d, err)
			continue
		}
		if out, err := json.Marshal(d); err != nil || string(out) != in {
			t.Errorf("Marshal %s: %s %v", in, out, err)
		}
	}
	// Anything else is read without an error (so that the members after it
	// are read too) and is no valid quantity.
	for _, in := range []string{`"12.5"`, `true`, `[1]`, `{}`, `1e401`, "1." + string(repeat('1', 120))} {
		var d euis.Decimal
		if err := json.Unmarshal([]byte(in), &d); err != nil || d.Valid() {
			t.Errorf("Unmarshal %.20s: %v, valid %v; want no error and an invalid Decimal", in, err, d.Valid())
		}
	}
	if _, err := json.Marshal(euis.Decimal("twelve")); err == nil {
		t.Error("Marshal of a Decimal that is no number: no error")
	}
}

func repeat(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

// TestDecimal_Text: the xs:decimal text of a quantity is exact up to six
// digits after the point, without exponent or trailing zeros; a stored
// value with more is rounded.
func TestDecimal_Text(t *testing.T) {
	for in, want := range map[euis.Decimal]string{
		"9999999999.999999": "9999999999.999999", "12.500": "12.5", "1e3": "1000", "1E-6": "0.000001",
		"0.0000005": "0.000001", "0.0000004": "0", "200": "200", "-0.0000001": "0",
	} {
		if got := in.Text(euis.QuantityFractionDigits); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for in, want := range map[euis.Decimal]int{"12": 0, "12.50": 1, "0.1234567": 7, "1.25e1": 1, "1e-7": 7, "1e3": 0} {
		if got := in.FractionDigits(); got != want {
			t.Errorf("FractionDigits(%s) = %d, want %d", in, got, want)
		}
	}
	if euis.Decimal("9999999999.999999").Cmp(euis.MaxQuantity) != 0 || euis.Decimal("10000000000").Cmp(euis.MaxQuantity) <= 0 {
		t.Error("Cmp with MaxQuantity")
	}
}
