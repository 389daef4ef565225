VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
GO      ?= go
BIN     := bin/eudr

.PHONY: build run test bench bench-screen fuzz lint clean

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) .

run: build
	$(BIN) serve --config config.example.yaml

# Unit and end-to-end tests (the e2e tests build and start the real binary).
test:
	$(GO) test -race -count=1 ./...

# Go benchmarks (geo's BenchmarkScreenJob is a screening job from a cold
# cache: plots/s, CPU per plot, peak memory; server/report/pdf's
# BenchmarkBatchReport a 500-plot batch's PDF report: time, memory), then the load run against the
# built binary (requests/s and p50/p99 latency of the full middleware chain
# next to a bare handler; screening throughput; GET /batches/{id}/report.pdf
# of a 500-plot batch in both forms, time and peak memory of the server).
# The load tests (load_*_test.go) build only with the load tag.
bench: build
	$(GO) test -run='^$$' -bench=. -benchmem ./server ./server/polygon ./server/report/pdf ./storage ./geo ./geo/geotiff ./geo/plotfile ./ledger
	$(GO) test -tags load -count=1 -run='^TestLoad' -v -timeout=20m .

# The screening job on its own, on two cores as its targets are stated
# (plots/s from a cold page cache, CPU per plot, peak memory), 5 runs of
# 5 jobs for benchstat.
bench-screen:
	$(GO) test -run='^$$' -bench='^BenchmarkScreenJob$$' -cpu=2 -benchtime=5x -count=5 ./geo

# Each fuzz target for FUZZTIME (default 60s).
FUZZTIME ?= 60s
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseFeatureCollection -fuzztime=$(FUZZTIME) ./geo
	$(GO) test -run='^$$' -fuzz=FuzzOpen -fuzztime=$(FUZZTIME) ./geo/geotiff
	$(GO) test -run='^$$' -fuzz=FuzzDecode -fuzztime=$(FUZZTIME) ./geo/geotiff/internal/tifflzw

lint:
	$(GO) vet ./...
	test -z "$$(gofmt -l .)"
	@if command -v staticcheck >/dev/null; then staticcheck ./...; fi

clean:
	rm -rf bin
