package storage

import "time"

var (
	bucketEUCredentials = []byte("eu_credentials")
	keyEUCredentials    = []byte("current")
)

// EUCredentials are a tenant's credentials for the EU information system.
// The auth key is kept sealed (encrypted by the server under a key kept
// outside the store).
type EUCredentials struct {
	Username string `json:"username"`
	ClientID string `json:"clientId"`
	Endpoint string `json:"endpoint,omitempty"`
	// OperatorAccessIdentifier names the operator the client acts for in
	// the EU system's BodyIdentity header; "" for none.
	OperatorAccessIdentifier string    `json:"operatorAccessIdentifier,omitempty"`
	SealedAuthKey            []byte    `json:"sealedAuthKey"`
	UpdatedAt                time.Time `json:"updatedAt"`
}

// PutEUCredentials replaces the tenant's EU system credentials.
func (tx *Tx) PutEUCredentials(t Tenant, c *EUCredentials) error {
	b, err := tx.tenantBucket(t, bucketEUCredentials)
	if err != nil {
		return err
	}
	return putJSON(b, keyEUCredentials, c)
}

// FindEUCredentials returns the tenant's EU system credentials or
// ErrNotFound.
func (tx *Tx) FindEUCredentials(t Tenant) (*EUCredentials, error) {
	b, err := tx.tenantBucket(t, bucketEUCredentials)
	if err != nil {
		return nil, err
	}
	var c EUCredentials
	if err := getJSON(b, keyEUCredentials, &c); err != nil {
		return nil, err
	}
	return &c, nil
}
