# Floe. `make demo` and `make test` are the two commands a new machine needs.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION)
IMAGE   ?= floe:$(VERSION)
CFN_LINT_VERSION ?= 1.58.0
CFN_LINT_VENV    ?= $(or $(FLOE_INTEROP_CACHE),.cache)/cfn-lint-$(CFN_LINT_VERSION)

.PHONY: demo test test-long soak fuzz bench bench-tables bench-kafka interop build release image cfn-lint vet fmt clean proto alerts

PROTOC_GEN_GO_VERSION      ?= v1.36.12
PROTOC_GEN_GO_GRPC_VERSION ?= v1.5.1
GRPC_GATEWAY_VERSION       ?= v2.33.0
PROTO_BIN                  ?= $(CURDIR)/.cache/protoc-bin

## demo: build bin/floe, then run Floe end to end on embedded defaults (in-process Kafka,
## free loopback ports, a local warehouse); it ends with the table queried.
## DEMO_FLAGS=--serve keeps it running with the console's URL and a token until Ctrl-C.
## The build says what it does while it runs: a first one compiles about 860 packages.
DEMO_FLAGS ?=
demo:
	@echo "make demo: building bin/floe (a first build compiles about 860 packages, 4 to 6 minutes on 2 cores; later builds take seconds)"
	@start=$$(date +%s); \
	( while sleep 30 >/dev/null 2>&1; do echo "make demo: still building, $$(( $$(date +%s) - start )) s"; done ) & ticker=$$!; \
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/floe ./cmd/floe; rc=$$?; kill $$ticker; \
	[ $$rc -eq 0 ] && echo "make demo: built bin/floe in $$(( $$(date +%s) - start )) s; running bin/floe demo $(DEMO_FLAGS)"; exit $$rc
	@bin/floe demo $(DEMO_FLAGS)

## test: the hermetic suite (kfake, local files, in-process Raft); under 5 minutes
# Four packages and four parallel tests at a time on two cores: the suite mostly waits
# (on commit intervals, brokers, Raft elections), not computes: 1m15 of CPU over 1m48 of
# wall at -p 4 -parallel 4, against 2m31 at the defaults (2), measured on this 2-core box.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 10m -p 4 -parallel 4 ./...

# The tests behind the long build tag: whole-process fleets, chaos, crash,
# rolling-upgrade, mixed-version and total-loss runs (test/e2e).
LONG_TESTS = $(shell grep -l '^//go:build long' test/e2e/*_test.go | xargs grep -ho '^func Test[A-Za-z0-9_]*' | sed 's/^func //' | paste -sd'|')

## test-long: fleet, chaos and crash runs of real floe processes (CI runs it after make test)
test-long:
	$(GO) vet -tags long ./test/e2e
	$(GO) test -tags long -count=1 -timeout 40m -run '^($(LONG_TESTS))$$' ./test/e2e

## soak: a 3-node fleet for SOAK_DURATION minutes (default 60m) at steady load with a fault
## every minute; the never-killed node's RSS, goroutines, open files and Raft dir must
## end flat (< 5% growth over the last two thirds). Not in CI. Figures: SOAK_REPORT.
SOAK_DURATION ?= 60m
SOAK_REPORT ?= soak-report.md
soak:
	FLOE_SOAK_DURATION=$(SOAK_DURATION) FLOE_SOAK_REPORT=$(abspath $(SOAK_REPORT)) \
		$(GO) test -tags soak,long -count=1 -timeout $$(( $(SOAK_DURATION:m=) + 20 ))m -run '^TestSoak$$' -v ./test/e2e

## fuzz: every fuzz target for FUZZTIME each (default 30s; CI uses 10s), one at a time
## (test/fuzz.sh). Minimizing a newly interesting input is bounded to FUZZMINIMIZE runs:
## unbounded (Go's default, 60s) it can outlast a short FUZZTIME. A run that ends in Go
## 1.26's coordinator deadline race (golang/go#75804: "context deadline exceeded", no
## failing input) is fuzzed again, up to twice; every other failure fails.
FUZZTIME ?= 30s
FUZZMINIMIZE ?= 200x
fuzz:
	@bash test/fuzz.sh "$(GO)" $(FUZZTIME) $(FUZZMINIMIZE)

## bench: throughput against the raw limit of the same work (see docs/benchmarks.md)
bench:
	$(GO) run ./cmd/floe bench
	$(GO) test -run '^$$' -bench . -benchtime 2s ./worker/ingest ./worker/schemas ./proto/admin
	$(GO) run ./cmd/floe bench --format avro
	$(GO) run ./cmd/floe bench --health
	$(GO) run ./cmd/floe bench --cluster
	$(GO) run ./cmd/floe bench --upsert-passes 2

## bench-tables: many quiet tables on one node (issue 38; docs/benchmarks.md). TABLES_ARGS adds flags,
## e.g. '--nodes 3' or '--brokers HOST:PORT'
TABLES ?= 10 100 300
TABLES_ARGS ?=
bench-tables:
	$(GO) build -o bin/floe ./cmd/floe
	for n in $(TABLES); do bin/floe bench --tables $$n --tables-warmup 60s --tables-steady 120s $(TABLES_ARGS) || exit 1; done

## bench-kafka: Floe, the bench/baseline loop and the raw limit on one real Kafka broker
## (the interop bed's; bench/README.md, docs/benchmarks.md). Quick: BENCH_KAFKA_ARGS='--records 200000 --steady-seconds 10'
BENCH_KAFKA_ARGS ?=
bench-kafka:
	bash bench/kafka.sh $(BENCH_KAFKA_ARGS)

## interop: real Kafka, MinIO, moto, a schema registry, PyIceberg and Iceberg Java
## (after cfn-lint, which needs PyPI like the suite's own installs)
interop: cfn-lint
	bash test/interop/run.sh

## build: the floe binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -ldflags '$(LDFLAGS)' -o bin/floe ./cmd/floe

## release: the static release binary with version and commit stamped, exactly as the
## image's build stage builds it (deploy/docker/Dockerfile runs `make release`; no Docker
## needed here). Cross-compiles with GOOS/GOARCH from the environment.
release:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS) -X main.commit=$(COMMIT)' -o bin/floe ./cmd/floe

## image: the container image (needs a Docker engine with BuildKit)
image:
	docker build -f deploy/docker/Dockerfile --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

## cfn-lint: validate the CloudFormation template with cfn-lint from PyPI (pinned, in a venv)
cfn-lint:
	@test -x $(CFN_LINT_VENV)/bin/cfn-lint || { python3 -m venv $(CFN_LINT_VENV) && \
		$(CFN_LINT_VENV)/bin/pip install -q --disable-pip-version-check cfn-lint==$(CFN_LINT_VERSION); }
	$(CFN_LINT_VENV)/bin/cfn-lint deploy/cloudformation/*.yaml

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin demo-data

## proto: regenerate proto/floe/admin/v1 (protoc from Debian: apt-get install protobuf-compiler;
## plugins by go install at pinned versions, no remote registry)
proto:
	@command -v protoc >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
	GOBIN=$(PROTO_BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(PROTO_BIN) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN=$(PROTO_BIN) $(GO) install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION) github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
	PATH=$(PROTO_BIN):$$PATH protoc -I proto -I /usr/include \
	  --go_out=proto --go_opt=paths=source_relative \
	  --go-grpc_out=proto --go-grpc_opt=paths=source_relative \
	  --grpc-gateway_out=proto --grpc-gateway_opt=paths=source_relative,grpc_api_configuration=proto/floe/admin/v1/admin_http.yaml \
	  --openapiv2_out=proto/floe/admin/v1 --openapiv2_opt=grpc_api_configuration=proto/floe/admin/v1/admin_http.yaml,allow_merge=true,merge_file_name=admin,json_names_for_fields=false \
	  floe/admin/v1/admin.proto

## alerts: promtool (built from the Go module proxy, cached) checks the alert rules and runs their tests
alerts:
	bash deploy/prometheus/check.sh
