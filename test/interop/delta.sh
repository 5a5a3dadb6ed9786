# shellcheck shell=bash
# The Delta Lake readers of the interop suite (sourced by lib.sh): the io.delta
# jars for Spark, and verify_delta, which runs delta_check.py (delta-rs and
# Spark with Delta) on the tables that have formats [iceberg, delta].

# ------------------------------------------------------------------ Delta Lake (delta-rs and Spark)

# install_delta_spark: the io.delta jars for Spark (delta/pom.xml) into the
# cache; pyspark and delta-spark themselves come with the venv.
DELTA_JARS="$CACHE/delta-spark/jars"
install_delta_spark() {
	local stamp dir="$CACHE/delta-spark"
	stamp=$(stamp_of "$INTEROP_DIR/delta/pom.xml")
	if [[ -f $dir/.stamp && $(cat "$dir/.stamp") == "$stamp" ]]; then
		return 0
	fi
	log "fetching the Delta Lake jars for Spark from Maven Central"
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$INTEROP_DIR/delta" && mvn_q -Dmaven.repo.local="$M2" dependency:copy-dependencies \
		-DincludeScope=runtime -DexcludeGroupIds=org.scala-lang -DoutputDirectory="$DELTA_JARS") ||
		die "delta-spark: mvn dependency:copy-dependencies of io.delta:delta-spark failed"
	# Drop what pyspark's own jars already hold (Jackson, Parquet, Hadoop, log4j
	# at other versions): Spark loads its own first, and a second copy of a
	# library on the classpath is a conflict waiting to happen.
	local spark_jars j base
	spark_jars=$(ls "$VENV"/lib/python3*/site-packages/pyspark/jars/) || die "delta-spark: pyspark's jars not found in $VENV"
	for j in "$DELTA_JARS"/*.jar; do
		base=$(basename "$j" .jar)
		base=${base%%-[0-9]*}
		grep -q "^$base-[0-9]" <<<"$spark_jars" && rm "$j"
	done
	ls "$DELTA_JARS"/delta-spark_*.jar >/dev/null || die "delta-spark: no io.delta:delta-spark jar in $DELTA_JARS"
	echo "$stamp" >"$dir/.stamp"
}

# verify_delta NAME [--self-test] TOPIC...: delta_check.py on the Delta logs of
# tables with formats [iceberg, delta] of Floe node NAME: delta-rs on S3 against
# the expectation and the Iceberg view (PyIceberg), then one Spark session for
# all of them (history, txn). Each table's metadata location is the one
# verify_tables recorded last; the commit sequence comes from Floe's status.
verify_delta() {
	local name=$1 self=() t loc seq args=()
	shift
	[[ ${1:-} == --self-test ]] && { self=(--self-test); shift; }
	local status
	status=$(floe_status "$name") || die "floe $name: no status for the Delta check"
	for t in "$@"; do
		loc=$(awk -F'\t' -v e="$RUN_DIR/expect/$t.json" '$3==e{l=$2} END{print l}' "$RUN_DIR/tables.tsv")
		[[ -n $loc ]] || die "verify_delta: no metadata location recorded for $t (call verify_tables first)"
		seq=$(delta_sequence "interop.$t" <<<"$status") || die "floe $name: no Delta commit sequence for $t"
		args+=(--table "$loc" "$RUN_DIR/expect/$t.json" "$seq")
	done
	run_delta_check "$name" "${self[@]}" "${args[@]}"
	log "Delta readers (delta-rs, Spark) on $*"
}

# run_delta_check NAME [--self-test] --table METADATA EXPECT SEQUENCE...:
# delta_check.py (delta-rs, then one Spark session) on the given tables; its
# log goes to logs/delta-check-NAME.log; dies when a reader rejects one.
run_delta_check() {
	local name=$1 t0=$SECONDS
	shift
	mkdir -p "$RUN_DIR/$name/delta-copies"
	# shellcheck disable=SC2046
	fg_run "$PY" "$INTEROP_DIR/delta_check.py" $(reader_s3_args) --spark-jars "$DELTA_JARS" \
		--work "$RUN_DIR/$name/delta-copies" "$@" 2>"$RUN_DIR/logs/delta-check-$name.log" ||
		{ tail -n 30 "$RUN_DIR/logs/delta-check-$name.log" >&2; die "floe $name: a Delta reader rejected a table (see above)"; }
	log "delta_check.py for $name: $((SECONDS - t0))s"
}

# delta_sequence TABLE < status JSON: the commit sequence (txn version) Floe
# recorded for TABLE's Delta log; fails when the status shows none.
delta_sequence() {
	"$PY" -c '
import json, sys
for t in json.load(sys.stdin)["tables"]:
    if t["table"] == sys.argv[1]:
        d = t.get("delta")
        if not d or "delta" not in (t.get("formats") or []):
            sys.exit("%s: status shows no Delta log (formats %s)" % (sys.argv[1], t.get("formats")))
        print(d["sequence"])
        sys.exit(0)
sys.exit("%s not in the status" % sys.argv[1])
' "$1"
}
