package euis

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Decimal is a quantity as the decimal text it was given in: "12.5",
// "9999999999.999999". The EU system takes 16 significant digits
// (DecimalSixteenTotalSixPrecType), more than a float64 holds exactly
// (9999999999.999999 would go out as 9999999999.999998), so a quantity
// stays text from the API request to the SOAP body. In JSON it is a
// number, written as it was read. "" is no quantity (zero).
type Decimal string

// QuantityFractionDigits is how many digits after the decimal point a
// quantity may have (DecimalSixteenTotalSixPrecType).
const QuantityFractionDigits = 6

// Bounds of the text a Decimal is read from: no quantity needs more, and
// big.Rat would spend time and memory in proportion to an exponent
// (1e999999999).
const (
	maxDecimalLen      = 100
	maxDecimalExponent = 400
)

// rat is d's exact value; ok is false when d is not a JSON number within
// the bounds above ("" is zero).
func (d Decimal) rat() (r *big.Rat, ok bool) {
	if d == "" {
		return new(big.Rat), true
	}
	if !isNumberText(string(d)) {
		return nil, false
	}
	return new(big.Rat).SetString(string(d))
}

// isNumberText reports whether s is a JSON number (json.Valid accepts
// strings, objects and the rest too) of at most maxDecimalLen characters
// and an exponent of at most maxDecimalExponent either way.
func isNumberText(s string) bool {
	if s == "" || len(s) > maxDecimalLen || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) || !json.Valid([]byte(s)) {
		return false
	}
	if _, exp, ok := strings.Cut(strings.ToLower(s), "e"); ok {
		e, err := strconv.Atoi(exp)
		return err == nil && e >= -maxDecimalExponent && e <= maxDecimalExponent
	}
	return true
}

// Valid reports whether d is a number.
func (d Decimal) Valid() bool {
	_, ok := d.rat()
	return ok
}

// Sign is -1, 0 or +1 as d is below, at or above zero; 0 when d is not a
// number.
func (d Decimal) Sign() int {
	r, ok := d.rat()
	if !ok {
		return 0
	}
	return r.Sign()
}

// Cmp compares d and e as numbers (-1, 0, +1); a value that is no number
// counts as zero.
func (d Decimal) Cmp(e Decimal) int {
	a, ok := d.rat()
	if !ok {
		a = new(big.Rat)
	}
	b, ok := e.rat()
	if !ok {
		b = new(big.Rat)
	}
	return a.Cmp(b)
}

// FractionDigits is how many digits d has after the decimal point, its
// exponent counted ("1.25e1" has 1); 0 for a number without.
func (d Decimal) FractionDigits() int {
	s := strings.ToLower(string(d))
	mant, exp, _ := strings.Cut(s, "e")
	_, frac, _ := strings.Cut(mant, ".")
	n := len(strings.TrimRight(frac, "0"))
	if exp != "" {
		e, err := strconv.Atoi(exp)
		if err != nil {
			return n
		}
		n -= e
	}
	return max(n, 0)
}

// IsInteger reports whether d is a whole number.
func (d Decimal) IsInteger() bool {
	r, ok := d.rat()
	return ok && r.IsInt()
}

// Text is d as an xs:decimal: no exponent, no trailing zeros after the
// point, at most frac digits after it. A value with more is rounded to
// nearest, halves away from zero (a quantity stored before the API
// refused more than QuantityFractionDigits).
func (d Decimal) Text(frac int) string {
	r, ok := d.rat()
	if !ok {
		return string(d)
	}
	s := r.FloatString(frac)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// String is d's text.
func (d Decimal) String() string { return string(d) }

// DecimalOfMillionths is n millionths written as a Decimal ("12.5" for
// 12500000).
func DecimalOfMillionths(n uint64) Decimal {
	return Decimal(new(big.Rat).SetFrac(new(big.Int).SetUint64(n), big.NewInt(1_000_000)).FloatString(6)).trimmed()
}

// trimmed is d without trailing zeros after the point.
func (d Decimal) trimmed() Decimal {
	s := string(d)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return Decimal(s)
}

// millionths is d rounded to a whole number of millionths (of units when
// whole), for dividing it exactly; d must be a number from 0 to
// MaxQuantity.
func (d Decimal) millionths(whole bool) uint64 {
	r, _ := d.rat()
	if r == nil {
		return 0
	}
	scale := int64(1_000_000)
	if whole {
		scale = 1
	}
	s := new(big.Rat).Mul(r, new(big.Rat).SetInt64(scale)).FloatString(0) // rounds halves away from zero
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// MarshalJSON writes d as the JSON number it is.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if !d.Valid() || d == "" {
		return nil, fmt.Errorf("euis: %q is not a decimal number", string(d))
	}
	return []byte(d), nil
}

// UnmarshalJSON reads a JSON number as its text. Any other value is kept
// as its JSON text too, not refused here: an error would stop
// encoding/json from decoding the members after it, and the API answers
// every problem of a request at once. Such a Decimal is not Valid, which
// the request's and the statement's checks report with the member's path,
// and MarshalJSON refuses it.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	*d = Decimal(strings.TrimSpace(string(b)))
	return nil
}
