package risk

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

//go:embed data/annex_i.json
var annexIJSON []byte

// Product is an entry of Annex I to Regulation (EU) 2023/1115: a
// Harmonised System code (a chapter of 2 digits, a heading of 4 or a
// subheading of 6) that belongs to a commodity.
type Product struct {
	Code string `json:"code"`
	// Ex is set when the Annex lists only the part of the code that is made
	// of the commodity ("ex 9401": wooden seats only).
	Ex          bool   `json:"ex,omitempty"`
	Description string `json:"description"`
}

// Scope is Annex I: the products of each commodity.
type Scope struct {
	Version     string
	Source      string
	Date        string
	SHA256      string
	Commodities map[string][]Product
}

type scopeFile struct {
	Version     string               `json:"version"`
	Source      string               `json:"source"`
	Date        string               `json:"date"`
	Notes       string               `json:"notes"`
	Commodities map[string][]Product `json:"commodities"`
}

// HSCodePattern is what an hsCode must look like: a Harmonised System
// heading (4 digits), subheading (6), Combined Nomenclature code (8) or
// TARIC code (10), digits only.
var HSCodePattern = regexp.MustCompile(`^[0-9]{4}([0-9]{2}){0,3}$`)

var annexI = func() *Scope {
	var f scopeFile
	if err := json.Unmarshal(annexIJSON, &f); err != nil {
		panic("risk: embedded Annex I: " + err.Error())
	}
	sum := sha256.Sum256(annexIJSON)
	return &Scope{Version: f.Version, Source: f.Source, Date: f.Date, SHA256: hex.EncodeToString(sum[:]), Commodities: f.Commodities}
}()

// AnnexI returns the product scope embedded in the binary. Callers must
// not change it.
func AnnexI() *Scope { return annexI }

// Match returns the Annex I entry of commodity that covers hsCode: the one
// whose code is a prefix of hsCode (a code must be at least as precise as
// the entry: "0102" does not match the entry "010221", live cattle, since
// heading 0102 also holds buffalo). ok is false when there is none.
func (s *Scope) Match(commodity, hsCode string) (p Product, ok bool) {
	for _, e := range s.Commodities[commodity] {
		if strings.HasPrefix(hsCode, e.Code) {
			return e, true
		}
	}
	return Product{}, false
}

// CommodityOf returns the commodities whose Annex I entries cover hsCode,
// sorted.
func (s *Scope) CommodityOf(hsCode string) []string {
	var out []string
	for c := range s.Commodities {
		if _, ok := s.Match(c, hsCode); ok {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// Codes returns the codes Annex I lists for commodity, in the Annex's order.
func (s *Scope) Codes(commodity string) []string {
	var out []string
	for _, e := range s.Commodities[commodity] {
		out = append(out, e.Code)
	}
	return out
}

// CheckHSCode says what is wrong with hsCode for commodity, or "" when it
// is well formed and Annex I lists it for the commodity.
func (s *Scope) CheckHSCode(commodity, hsCode string) string {
	if !HSCodePattern.MatchString(hsCode) {
		return "must be a Harmonised System code of 4, 6, 8 or 10 digits without spaces or dots (1801, 180100, 18010000)"
	}
	if _, ok := s.Match(commodity, hsCode); ok {
		return ""
	}
	msg := fmt.Sprintf("%s is not a product of %s in Annex I to Regulation (EU) 2023/1115; %s codes start with %s",
		hsCode, commodity, commodity, strings.Join(s.Codes(commodity), ", "))
	if others := s.CommodityOf(hsCode); len(others) > 0 {
		msg += fmt.Sprintf(" (%s is listed for %s)", hsCode, strings.Join(others, ", "))
	}
	return msg
}
