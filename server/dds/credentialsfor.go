package dds

import (
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// CredentialsFor returns the tenant's EU system credentials to call with,
// unsealed, as the statement workflow uses them (the sandbox needs none;
// production without usable ones is 422 EU_SYSTEM_NOT_CONFIGURED): for the
// other workflows that call the EU system, the simplified declarations.
func (s *Service) CredentialsFor(tx *storage.Tx, t storage.Tenant) (euis.Credentials, error) {
	return s.credentials(tx, t)
}
