// Package storage owns the appliance's bbolt file: opening and closing it, the
// bucket layout, typed records, tenancy, the schema version and backups.
//
// # Opening
//
// One process holds the file at a time. Open waits at most a second for the
// file lock and then fails with ErrInUse, so a second `eudr serve` (or an admin
// command against a running appliance's data dir) says so clearly instead of
// hanging. Commits are synchronous (NoSync stays off): once Update returns,
// the change survives kill -9 and power loss.
//
// # Buckets
//
// Global records (not owned by any tenant):
//
//	meta               schema_version, created_at, secret:<name> (the login token key)
//	orgs               org id -> Org
//	users              username -> User
//	api_keys           key id -> APIKey
//	api_key_hashes     SHA-256(key value) -> key id (current and rotated-out values)
//	idempotency_expiry BE(expiry unix nanos) | tenant | 0x00 | key -> nil (sweep index)
//	layers             layer id (time-ordered) -> Layer (reference layers, without features)
//	layer_data         layer id -> the layer's GeoJSON FeatureCollection as imported
//	sessions           SHA-256(session id) -> Session (console sign-ins)
//
// Tenant records live under tenants/<org>/<environment>/<resource>, so a
// lookup made with the wrong (organisation, environment) pair cannot find a
// record by construction:
//
//	suppliers             erpVendorId -> Supplier
//	suppliers_by_id       supplierId (time-ordered) -> erpVendorId
//	idempotency           Idempotency-Key -> IdempotencyRecord
//	jobs                  job id -> Job, with the counts of its results by status
//	job_inputs            job id -> the job's input (a polygon request body) until it ends
//	job_results           job id | 0x00 | BE(item) -> the item's result, read a page at a time
//	polygons              polygon id -> Polygon
//	polygon_features      polygon id -> the feature as sent, whitespace removed
//	polygon_evidence      polygon id -> the evidence document of its screening
//	supplier_polygon_stats erpVendorId -> StatusCounts of the polygons with that supplierId
//	batches               batch id (time-ordered) -> Batch
//	batch_polygons        batch id -> JSON array of its polygon ids
//	batch_assessments     batch id -> the risk assessment document
//	polygon_batches       polygon id | 0x00 | batch id -> empty (a polygon in use cannot be deleted)
//	reports               report id (time-ordered) -> Report (an archive report; its zip is a file)
//
// Other packages (queue, ledger) own buckets of their own in the same file and
// list them in their doc.go.
//
// # Transactions
//
// Update and View hand the caller a *Tx that embeds *bbolt.Tx and fixes Now()
// once per transaction. Helpers that take a *Tx never open another one.
// Values read from bbolt are decoded before the transaction ends.
package storage
