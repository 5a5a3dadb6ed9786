# shellcheck shell=bash
# Interop scenario 16: the real Kafka broker hangs (SIGSTOP, as a long GC
# pause or a stuck disk does) for FLOE_S16_HANG seconds (60) under one Floe
# node while a producer writes. Within 30 s `floe status -o json` must show
# every table DEGRADED with one reason naming the broker and the partitions
# waiting on it, /metrics must say floe_kafka_broker_up 0 for it and the log
# must hold the WARN line. After SIGCONT the tables must be RUNNING again
# within FLOE_S16_RECOVER seconds (10; the measured time is logged, the goal
# is 5) with the INFO line logged, and every produced (partition, offset)
# must be in the table exactly once. Sourced by run.sh.

SCENARIO_TITLES[16]="Kafka broker SIGSTOPped for ${FLOE_S16_HANG:-60}s: shown within 30 s in status, /metrics and the log; cleared after SIGCONT"
SCENARIO_ORDER+=(16)

S16_HANG=${FLOE_S16_HANG:-60}
S16_RECOVER=${FLOE_S16_RECOVER:-10}

scenario_16() {
	local n=s16 topics=(s16_events) admin kpid t0 t1 rc=0 rx log metrics
	create_topics 6 "${topics[@]}"
	floe_config $n "${topics[@]}"
	start_floe $n
	admin=$(floe_admin $n)
	log="$RUN_DIR/logs/floe-$n.log"
	# About 100 s of production at 200/s: it goes on through the hang (the
	# producer's own requests wait too) and after it.
	produce_bg 20000 200 0 "${topics[@]}"
	wait_committed $n 1 60
	rx="kafka broker: 6 partitions \(.*\) wait on broker 127\.0\.0\.1:$KAFKA_PORT"
	before_fault $n "kafka broker" "${topics[@]}"
	kpid=${PIDS[kafka]}
	log "SIGSTOP kafka (pid $kpid) for ${S16_HANG}s"
	t0=$(date +%s)
	kill -STOP "$kpid"
	fg_run "$PY" "$INTEROP_DIR/interop.py" watch-state --floe-bin "$FLOE_BIN" --admin "$admin" \
		--state DEGRADED --reason-regex "$rx" --duration 30 "${topics[@]/#/interop.}" || rc=$?
	log "shown after $(($(date +%s) - t0))s"
	if ((rc == 0)); then
		# Read the whole exposition first: piped into grep -q, curl fails
		# writing what follows the first match (exit 23), and pipefail
		# failed the check though the line was there.
		metrics=$(curl -fsS --max-time 10 "http://$admin/metrics") || metrics=""
		grep -q "^floe_kafka_broker_up{broker=\"127.0.0.1:$KAFKA_PORT\"} 0" <<<"$metrics" ||
			{ log "floe_kafka_broker_up is not 0 for the hung broker"; rc=1; }
		grep -q 'msg="kafka broker down"' "$log" || { log "no WARN line 'kafka broker down' in $log"; rc=1; }
	fi
	if ((rc != 0)); then
		# What the node showed, for whoever reads the failure.
		log "status, /metrics' broker lines and the log's last lines as the check failed:"
		timeout 20 "$FLOE_BIN" status --admin-addr "$admin" -o json 2>&1 | head -c 4000 >&2 || true
		curl -sS --max-time 10 "http://$admin/metrics" 2>&1 | grep -E '^floe_kafka_broker|^floe_table_fetch_age' | head -20 >&2 || true
		tail -n 20 "$log" >&2 || true
	fi
	sleep_until $((t0 + S16_HANG))
	kill -CONT "$kpid"
	t1=$(date +%s)
	((rc == 0)) || die "floe $n did not show the hung broker within 30 s"
	log "SIGCONT kafka"
	wait_state $n RUNNING "$S16_RECOVER" "${topics[@]}"
	log "tables RUNNING $(($(date +%s) - t1))s after SIGCONT"
	grep -q 'msg="kafka broker answers again"' "$log" || die "no INFO line 'kafka broker answers again' in $log"
	wait_producer
	expect_tables "${topics[@]}"
	wait_caught_up $n 300 "${topics[@]}"
	verify_tables $n "${topics[@]}"
	stop_floe $n
}
