package dds

import "github.com/eudr/eudr/storage"

// CredentialsView shows stored credentials without the auth key, as GET
// and PUT /credentials/eu-system answer them.
type CredentialsView struct {
	Username   string  `json:"username"`
	ClientID   string  `json:"clientId"`
	Endpoint   *string `json:"endpoint"`
	AuthKeySet bool    `json:"authKeySet"`
	// OperatorAccessIdentifier is sent in the BodyIdentity header.
	OperatorAccessIdentifier *string `json:"operatorAccessIdentifier"`
	UpdatedAt                string  `json:"updatedAt"`
	// EffectiveEndpoint is the URL Endpoint stands for.
	EffectiveEndpoint string `json:"effectiveEndpoint"`
}

// ViewCredentials shows c; effective is the URL its endpoint stands for.
func ViewCredentials(c *storage.EUCredentials, effective string) CredentialsView {
	return CredentialsView{Username: c.Username, ClientID: c.ClientID, Endpoint: storage.Optional(c.Endpoint),
		AuthKeySet: len(c.SealedAuthKey) > 0, OperatorAccessIdentifier: storage.Optional(c.OperatorAccessIdentifier), UpdatedAt: storage.FormatTime(c.UpdatedAt), EffectiveEndpoint: effective}
}
