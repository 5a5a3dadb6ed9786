# shellcheck shell=bash
# Interop scenario 11: read committed on a real broker. Sourced by run.sh.
#
# The Go test TestReadCommitted (test/e2e/txn_test.go) against this run's
# Kafka: franz-go's transactional producer writes committed and aborted
# transactions of three records, interleaved with plain records, on a fresh
# topic of two partitions (each partition starts with an aborted batch and
# ends with a committed transaction's marker, then an aborted batch and its
# marker). A franz-go read-committed consumer confirms what Kafka holds; one
# Floe node then materializes the topic, and an iceberg-go scan must find
# every committed record's (partition, offset) once, no aborted one, no
# marker dead-lettered, and floe.offsets at the high watermark: the ledger
# accepted ranges over the offsets a read-committed reader never sees.

SCENARIO_TITLES[11]="transactions on real Kafka: aborted batches never reach the table, committed offsets reach the high watermark"
SCENARIO_ORDER+=(11)

scenario_11() {
	local testlog="$RUN_DIR/logs/s11-read-committed-test.log" rc=0
	log "TestReadCommitted on Kafka $KAFKA_BOOTSTRAP (test log $testlog)"
	fg_run env FLOE_S11_KAFKA="$KAFKA_BOOTSTRAP" \
		go -C "$REPO" test -count=1 -timeout 10m -run '^TestReadCommitted$' -v ./test/e2e/ >"$testlog" 2>&1 || rc=$?
	grep -E 'txn_test.go|--- (PASS|FAIL)' "$testlog" | sed 's/^ */  /' || true
	if ((rc != 0)); then
		tail -n 100 "$testlog" >&2
		die "TestReadCommitted on real Kafka failed (exit $rc; full log $testlog)"
	fi
	grep -q 'real Kafka at' "$testlog" || die "TestReadCommitted did not use the real broker (see $testlog)"
}
