# shellcheck shell=bash
# Interop scenario 14: an upsert table (docs/upsert.md) read by PyIceberg and
# Iceberg Java, and its position-delete files kept bounded by compaction under
# 1-second commits. Sourced by run.sh.
#
# One Floe node on MinIO materializes a topic of 3 partitions in mode upsert
# (key: the Kafka record key), commit_interval 1s, compaction every
# FLOE_S14_INTERVAL seconds. A producer writes keyed records (FLOE_S14_KEYS
# keys, many updates each, 10% tombstones) for FLOE_S14_SECONDS; meanwhile the
# live delete files of the table's current snapshot are sampled every 2 s and
# must stay at or below the bound (README.md, "Scenario 14"). Then the topic is
# read back with a Kafka consumer into the model (every record; the latest
# value per partition and key, tombstones removing it), Floe must commit every
# offset, and PyIceberg and Iceberg Java each scan the current snapshot and
# the recent ancestor with the most delete files (a time travel, below the
# topic's end): their rows must be exactly the model at that snapshot's
# floe.offsets.

SCENARIO_TITLES[14]="upsert table: PyIceberg and Iceberg Java read the model's latest value per key; delete files bounded under 1-second commits"
SCENARIO_ORDER+=(14)

S14_SECONDS=${FLOE_S14_SECONDS:-75}
S14_KEYS=${FLOE_S14_KEYS:-400}
S14_RATE=${FLOE_S14_RATE:-200}
S14_INTERVAL=${FLOE_S14_INTERVAL:-10} # compaction.interval, seconds
S14_MIN_FILES=4                       # compaction.{hot_,}min_input_files

upsert_check() { "$PY" "$INTEROP_DIR/upsert_check.py" "$@"; }

# upsert_readers LOCATION MODEL DIR: PyIceberg and Iceberg Java read the
# snapshots upsert_check.py snapshots picks; each must equal the model there.
upsert_readers() {
	local loc=$1 model=$2 dir=$3 snaps snap dels failed=0 applied=0
	# shellcheck disable=SC2046
	snaps=$(upsert_check snapshots --metadata-location "$loc" $(reader_s3_args)) || die "s14: listing the snapshots of $loc"
	while IFS=$'\t' read -r snap dels; do
		log "s14: snapshot $snap ($dels position-delete files)"
		((dels > 0)) && applied=1
		# shellcheck disable=SC2046
		upsert_check check-pyiceberg --metadata-location "$loc" --snapshot-id "$snap" --model "$model" $(reader_s3_args) || failed=1
		# shellcheck disable=SC2046
		java -Xmx1g -cp "$JAVA_CHECK_DIR/target/classes:$(cat "$JAVA_CHECK_DIR/classpath.txt")" io.floe.interop.UpsertDump \
			--metadata-location "$loc" --snapshot-id "$snap" --out "$dir/java-$snap.jsonl" $(reader_s3_args) &&
			upsert_check compare --reader iceberg-java --rows "$dir/java-$snap.jsonl" --model "$model" || failed=1
	done <<<"$snaps"
	((failed == 0)) || die "s14: a reader's rows differ from the model (see above)"
	((applied == 1)) || die "s14: no retained snapshot has a position-delete file: the readers applied no deletes"
}

scenario_14() {
	local n=s14 t=s14_upsert dir="$RUN_DIR/s14" pid bound
	mkdir -p "$dir"
	create_topics 3 $t
	FLOE_INTEROP_COMMIT_INTERVAL=1s floe_config $n $t
	table_setting $n $t "mode: upsert"
	table_setting $n $t "compaction: {min_input_files: $S14_MIN_FILES, hot_min_input_files: $S14_MIN_FILES, interval: ${S14_INTERVAL}s, cool_down: 10m}"
	start_floe $n
	# At most one delete file per commit (1 s). A check finding fewer than
	# S14_MIN_FILES waits one interval more, and a rewrite takes up to one
	# interval: (S14_MIN_FILES - 1) + 2 x interval / 1 s (README.md).
	bound=$((S14_MIN_FILES - 1 + 2 * S14_INTERVAL))
	upsert_check produce --bootstrap "$KAFKA_BOOTSTRAP" --topic $t --keys "$S14_KEYS" --rate "$S14_RATE" \
		--duration "$S14_SECONDS" --report "$dir/produced.json" >"$dir/producer.log" 2>&1 &
	pid=$!
	track producer "$pid"
	# shellcheck disable=SC2046
	fg_run "$PY" "$INTEROP_DIR/upsert_check.py" sample-deletes --admin "$(floe_admin $n)" --table "interop.$t" --pid "$pid" \
		--bound "$bound" --min-peak "$S14_MIN_FILES" --out "$dir/deletes.jsonl" $(reader_s3_args) ||
		die "s14: the delete files of the upsert table were not kept at or below $bound"
	wait "$pid" || die "s14: producer failed (log $dir/producer.log)"
	unset "PIDS[producer]"
	cat "$dir/producer.log"
	upsert_check model --bootstrap "$KAFKA_BOOTSTRAP" --topic $t --report "$dir/produced.json" --out "$dir/model.json" ||
		die "s14: building the model from the topic"
	fg_run "$PY" "$INTEROP_DIR/upsert_check.py" wait-caught-up --admin "$(floe_admin $n)" --table "interop.$t" \
		--model "$dir/model.json" --timeout 120 || {
		tail -n 20 "$RUN_DIR/logs/floe-$n.log" >&2
		die "s14: floe $n did not commit every offset"
	}
	local loc
	loc=$("$PY" "$INTEROP_DIR/interop.py" metadata-locations --admin "$(floe_admin $n)" "interop.$t" | cut -f2) ||
		die "s14: no metadata location"
	upsert_readers "$loc" "$dir/model.json" "$dir"
	stop_floe $n
}
