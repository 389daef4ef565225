package main_test

// End-to-end tests: TestMain builds eudr once; each test runs `eudr serve` on
// its own data dir with 127.0.0.1:0 listeners and talks HTTP like a client
// (docs/architecture.md, Tests). The tests are in the e2e_*_test.go files,
// one per concern; the process harness is in e2e_helpers_test.go, the HTTP
// client, the checks of answers and the webhook receiver in server/apitest.

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every end-to-end test skips itself
	}
	dir, err := os.MkdirTemp("", "eudr-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	eudrBin, err = buildBinary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	sandboxKeyPattern    = regexp.MustCompile(`^sk_test_[0-9A-Za-z]{32}$`)
	productionKeyPattern = regexp.MustCompile(`^sk_live_[0-9A-Za-z]{32}$`)
	keyIDPattern         = regexp.MustCompile(`^key_[0-9A-Z]{26}$`)
	supplierIDPattern    = regexp.MustCompile(`^sup_[0-9A-Z]{26}$`)
)
