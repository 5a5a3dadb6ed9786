# Floe. `make demo` and `make test` are the two commands a new machine needs.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: demo test bench interop build release vet fmt clean

## demo: run Floe end to end on embedded defaults (in-process Kafka, local warehouse)
demo:
	$(GO) run ./cmd/floe demo

## test: the hermetic suite (kfake, local files, in-process Raft)
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 25m ./...

## bench: throughput against the raw limit of the same work (see docs/benchmarks.md)
bench:
	$(GO) run ./cmd/floe bench
	$(GO) test -run '^$$' -bench . -benchtime 2s ./worker
	$(GO) run ./cmd/floe bench --health
	$(GO) run ./cmd/floe bench --cluster

## interop: real Kafka, MinIO, moto, a schema registry, PyIceberg and Iceberg Java
interop:
	bash test/interop/run.sh

## build: the floe binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o bin/floe ./cmd/floe

## release: the static release binary (no Docker needed)
release: build

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin demo-data
