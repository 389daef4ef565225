package pdf

import (
	"slices"
	"testing"

	"github.com/eudr/eudr/server/anchor"
)

// A ledger text gives the same QR code every time it is encoded: the
// report's bytes, recorded in the ledger, must not depend on which mask an
// encoder happens to pick among those that score the same. The entry is
// one whose code had two such masks.
func TestQRModules_SameEveryTime(t *testing.T) {
	text := ledgerQRText(&anchor.DocumentLedger{Index: 414, TransactionHash: "78d349600c63b7ca828bb6e416511fe21ed50c819383492889084a013bbee799",
		Checkpoint: "eudr-appliance/default/sandbox\n500\nUzWEfo/fBjBfnNZS2Fdy5ghI5WvT+NpssOsAy1vHIlY=\n\n" +
			"— eudr-appliance GHaoNWfULUY14CzoR1tQIYkYvMX2ShnWQ8n3SSw7/CqFv46f8+LZP4/th8qd6rKiS1viXLotpqgeOw5XgPj88vZchQk=\n"})
	first, err := qrModules(text)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		again, err := qrModules(text)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(first, again, slices.Equal) {
			t.Fatalf("encoding %d of one text gives another QR code than the first", i+2)
		}
	}
}
