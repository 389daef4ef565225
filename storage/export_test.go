package storage

// Unexported sentinels, exposed to the black-box tests so that they can tell
// "refused for this reason" from "failed for some other reason".
var (
	ErrSchemaTooNew     = errSchemaTooNew
	ErrReadOnlyNotFound = errReadOnlyNotFound
)
