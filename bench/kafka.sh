#!/usr/bin/env bash
# make bench-kafka: the real-broker benchmark (bench/README.md). Starts the
# interop suite's Apache Kafka broker (test/interop/lib.sh, cached in
# .cache/interop or $FLOE_INTEROP_CACHE), builds floe and the baseline, and
# runs `floe bench --brokers` against it (its run directory is removed with
# the suite's unless FLOE_INTEROP_KEEP=1). Arguments go to floe bench, e.g.
#   bash bench/kafka.sh --records 200000 --kafka-partitions 8 --steady-seconds 10
set -euo pipefail
# shellcheck source=../test/interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../test/interop/lib.sh"

init_run_dir
trap 'stop_all; [[ ${FLOE_INTEROP_KEEP:-} == 1 ]] || rm -rf "$RUN_DIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

install_python
install_kafka
start_kafka
bin="$RUN_DIR/bin"
mkdir -p "$bin" "$REPO/.cache"
(cd "$REPO" && go build -o "$bin/floe" ./cmd/floe && go build -o "$bin/baseline" ./bench/baseline) ||
	die "bench: go build of floe or bench/baseline failed"
log "benchmark against $KAFKA_BOOTSTRAP (Kafka log: $RUN_DIR/logs/kafka.log)"
fg_run "$bin/floe" bench --brokers "$KAFKA_BOOTSTRAP" --baseline-bin "$bin/baseline" \
	--pycheck "$PY $INTEROP_DIR/pyiceberg_check.py" --dir "$RUN_DIR/bench" --keep \
	--floe-cpuprofile "${FLOE_BENCH_PROFILE:-$REPO/.cache/bench-kafka-floe.prof}" --broker-pid "${PIDS[kafka]}" --records 2000000 "$@"
