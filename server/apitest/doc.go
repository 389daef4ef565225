// Package apitest is the test harness shared by the repository's tests of
// the HTTP API, whether they run the built binary (the root package's
// end-to-end tests) or a server in the test process (httptest):
//
//   - a client: Do and TryDo send one request with headers built by Hdr,
//     WithKey, Bearer and Merge, read the whole answer into a Response and
//     check what every answer must carry (CheckCommon); NewIdemKey makes
//     Idempotency-Keys; Login and CreateKey get a login token and an API
//     key the way a client does;
//   - checks of answers: WantStatus, WantError (the error envelope, its
//     code and detail codes), WantUnauthorized and WantForbidden (the fixed
//     messages of every 401 and 403), ParseTime (the API's timestamps);
//   - Receiver, an HTTPS webhook receiver (httptest.NewTLSServer) that
//     verifies each delivery's signatures with queue/webhooksig, records
//     every request, answers as a test programs it, and writes its CA
//     certificate to a PEM file for EUDR_WEBHOOKS_CA_FILE;
//   - Clock, a fake clock for tests that drive time themselves;
//   - Logs, which collects a zerolog logger's JSON lines and finds or
//     waits for a line by its message and fields;
//   - UnzipArchive and JSONLines, which read an archive report and check
//     the promises of its manifest;
//   - Bench, the temp store, job queue, publisher and ledger that a
//     workflow package (server/shipment, ...) builds its service on in
//     its own tests.
//   - Plots and PlotLayer, the realistic plots and deforestation layer
//     that the benchmarks of polygon submission and screening measure.
//
// Helpers that can fail take a testing.TB and report through it. TryDo and
// Receiver's methods report no fatal errors, so they are safe to call from
// goroutines other than the test's.
//
// apitest does not import package server (nothing may), so server's own
// tests can use it too, nor any workflow package, so theirs can. It has
// no init function; its only package state is an HTTP client and
// compiled patterns.
package apitest
