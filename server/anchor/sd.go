package anchor

// EntrySDStatus is the entry type of a simplified declaration's state
// change. It is not dds.status: a declaration is a record of its own kind,
// and a verifier who reads an entry should not take its ID for a DDS's.
const EntrySDStatus = "sd.status"

// SDEntry is the ledger entry of a simplified declaration's state change.
type SDEntry struct {
	Type               string   `json:"type"` // "sd.status"
	SDID               string   `json:"sdId"`
	Status             string   `json:"status"`
	Actor              string   `json:"actor"`
	StatementSHA256    string   `json:"statementSha256"`
	SDIdentifier       string   `json:"sdIdentifier,omitempty"`
	ReferenceNumber    string   `json:"referenceNumber,omitempty"`
	VerificationNumber string   `json:"verificationNumber,omitempty"`
	Reasons            []string `json:"reasons,omitempty"`
}
