# shellcheck shell=bash
# Interop scenario 15: the engine matrix of issue 36 (engines_check.py). Sourced by run.sh.
#
# Two Floe nodes write the same four topics, one into a warehouse on MinIO
# (s3://interop/s15s), one into a file:// warehouse ($RUN_DIR/s15f/warehouse), every
# table with formats [iceberg, delta]: s15_append (append; a field appears in the last
# batch), s15_upsert (mode upsert on the Kafka key, tombstones) and s15_part
# (partition_by identity(region) with hostile values) and s15_upart (upsert and
# partitioned: keys move between partitions). engines_check.py then reads each
# table with PyIceberg, DuckDB (iceberg_scan, REST ATTACH on Floe's catalog, delta_scan),
# Polars (scan_iceberg, read_delta), delta-rs (QueryBuilder, to_pyarrow_table), Spark
# (Iceberg through Floe's REST catalog, Delta) and Trino 476 (Iceberg connector on Floe's
# REST catalog, Delta connector with register_table), before and after
# `floe ctl tables maintain` compacts the upsert table, and compares each with what the
# broker acknowledged. The matrix is printed and kept in $RUN_DIR/s15/matrix.txt.

SCENARIO_TITLES[15]="engine matrix: PyIceberg, DuckDB, Polars, delta-rs, Spark and Trino read append, upsert and partitioned tables on S3 and file://, Iceberg and Delta"
SCENARIO_ORDER+=(15)

TRINO_VERSION=${TRINO_VERSION:-476}                 # io.trino:trino-server:<v>:tar.gz, io.trino:trino-cli:<v>:jar:executable
ICEBERG_SPARK_VERSION=${ICEBERG_SPARK_VERSION:-1.12.0} # org.apache.iceberg:iceberg-spark-runtime-4.1_2.13, iceberg-aws-bundle
TRINO_DIR="$CACHE/trino-$TRINO_VERSION"
ICEBERG_SPARK_JARS="$CACHE/iceberg-spark-$ICEBERG_SPARK_VERSION/jars"
S15_TRINO_SKIP="" # the reason Trino cannot run here, if any (its cells then say SKIPPED with it)

# install_trino: the Trino server tarball and the CLI's executable jar from Maven
# Central (about 820 MB, once), unpacked into the cache.
install_trino() {
	[[ -f $TRINO_DIR/.done ]] && return 0
	log "fetching Trino $TRINO_VERSION (server tarball, about 820 MB, and CLI) from Maven Central"
	local tmp="$CACHE/trino-download"
	rm -rf "$TRINO_DIR"
	mkdir -p "$tmp" "$TRINO_DIR"
	mvn_q -Dmaven.repo.local="$M2" dependency:copy -Dartifact="io.trino:trino-server:$TRINO_VERSION:tar.gz" \
		-DoutputDirectory="$tmp" || die "trino: fetching io.trino:trino-server:$TRINO_VERSION:tar.gz failed"
	mvn_q -Dmaven.repo.local="$M2" dependency:copy -Dartifact="io.trino:trino-cli:$TRINO_VERSION:jar:executable" \
		-DoutputDirectory="$tmp" || die "trino: fetching io.trino:trino-cli:$TRINO_VERSION:jar:executable failed"
	tar xzf "$tmp/trino-server-$TRINO_VERSION.tar.gz" -C "$TRINO_DIR" --strip-components=1 || die "trino: unpacking failed"
	mv "$tmp/trino-cli-$TRINO_VERSION-executable.jar" "$TRINO_DIR/trino-cli.jar"
	# The unpacked copy is what runs; the two tarball copies are 1.6 GB for nothing.
	rm -rf "$tmp" "$M2/io/trino/trino-server/$TRINO_VERSION"
	touch "$TRINO_DIR/.done"
}

# install_iceberg_spark: Iceberg's Spark runtime and its AWS bundle (S3FileIO).
install_iceberg_spark() {
	[[ -f $ICEBERG_SPARK_JARS/.done ]] && return 0
	log "fetching Iceberg $ICEBERG_SPARK_VERSION for Spark 4.1 from Maven Central"
	rm -rf "$ICEBERG_SPARK_JARS"
	mkdir -p "$ICEBERG_SPARK_JARS"
	local a
	for a in "iceberg-spark-runtime-4.1_2.13" "iceberg-aws-bundle"; do
		mvn_q -Dmaven.repo.local="$M2" dependency:copy -Dartifact="org.apache.iceberg:$a:$ICEBERG_SPARK_VERSION" \
			-DoutputDirectory="$ICEBERG_SPARK_JARS" || die "iceberg-spark: fetching org.apache.iceberg:$a:$ICEBERG_SPARK_VERSION failed"
	done
	touch "$ICEBERG_SPARK_JARS/.done"
}

# trino_java: a JDK of version 24 or newer (Trino 476 needs it), the Temurin 25 here.
trino_java() {
	if [[ -n ${FLOE_INTEROP_TRINO_JAVA:-} ]]; then
		echo "$FLOE_INTEROP_TRINO_JAVA"
		return
	fi
	local j v
	for j in /usr/lib/jvm/*/bin/java /opt/*/bin/java; do
		[[ -x $j ]] || continue
		v=$("$j" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/{print $2}')
		if [[ ${v%%.*} =~ ^[0-9]+$ ]] && ((${v%%.*} >= 24)); then
			echo "$j"
			return
		fi
	done
}

# start_trino ADMIN_S3 ADMIN_FILE: one coordinator (its own worker) with the iceberg and
# delta-lake plugins only, four catalogs: iceberg_s3 / iceberg_file on the two nodes'
# REST catalogs, delta_s3 / delta_file (file metastore, register_table). Returns at once;
# wait_trino waits for it.
TRINO_PORT="" TRINO_URL=""
start_trino() {
	local java dir="$RUN_DIR/s15/trino" p
	java=$(trino_java)
	if [[ -z $java ]]; then
		S15_TRINO_SKIP="no JDK 24 or newer under /usr/lib/jvm or /opt (Trino $TRINO_VERSION needs one; set FLOE_INTEROP_TRINO_JAVA)"
		return 0
	fi
	read -r TRINO_PORT < <(free_ports 1)
	TRINO_URL="http://127.0.0.1:$TRINO_PORT"
	mkdir -p "$dir/etc/catalog" "$dir/plugin" "$dir/data" "$dir/ms-s3" "$dir/ms-file"
	for p in iceberg delta-lake; do ln -sfn "$TRINO_DIR/plugin/$p" "$dir/plugin/$p"; done
	cat >"$dir/etc/config.properties" <<EOF
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$TRINO_PORT
discovery.uri=$TRINO_URL
plugin.dir=$dir/plugin
catalog.config-dir=$dir/etc/catalog
query.max-memory=1GB
query.max-memory-per-node=1GB
EOF
	local s3fs local_fs="fs.native-local.enabled=true
local.location=/"
	s3fs="fs.native-s3.enabled=true
s3.endpoint=$S3_ENDPOINT
s3.region=$S3_REGION
s3.path-style-access=true
s3.aws-access-key=$S3_ACCESS_KEY
s3.aws-secret-key=$S3_SECRET_KEY"
	printf 'connector.name=iceberg\niceberg.catalog.type=rest\niceberg.rest-catalog.uri=http://%s/iceberg\n%s\n' \
		"$1" "$s3fs" >"$dir/etc/catalog/iceberg_s3.properties"
	printf 'connector.name=iceberg\niceberg.catalog.type=rest\niceberg.rest-catalog.uri=http://%s/iceberg\n%s\n' \
		"$2" "$local_fs" >"$dir/etc/catalog/iceberg_file.properties"
	printf 'connector.name=delta_lake\nhive.metastore=file\nhive.metastore.catalog.dir=local://%s\ndelta.register-table-procedure.enabled=true\n%s\n%s\n' \
		"$dir/ms-s3" "$s3fs" "$local_fs" >"$dir/etc/catalog/delta_s3.properties"
	printf 'connector.name=delta_lake\nhive.metastore=file\nhive.metastore.catalog.dir=local://%s\ndelta.register-table-procedure.enabled=true\n%s\n' \
		"$dir/ms-file" "$local_fs" >"$dir/etc/catalog/delta_file.properties"
	(cd "$TRINO_DIR" && exec "$java" -Xmx2g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Djdk.attach.allowAttachSelf=true \
		-Dconfig="$dir/etc/config.properties" -Dnode.environment=interop -Dnode.id=floe-interop \
		-Dnode.internal-address=127.0.0.1 -Dnode.data-dir="$dir/data" \
		-cp "$TRINO_DIR/lib/*" io.trino.server.TrinoServer) >"$RUN_DIR/logs/trino.log" 2>&1 &
	track trino $!
	TRINO_T0=$SECONDS
	log "trino $TRINO_VERSION starting at $TRINO_URL ($java; log $RUN_DIR/logs/trino.log)"
}

# wait_trino TIMEOUT: Trino's /v1/info says it is no longer starting, and the CLI
# runs a query; else S15_TRINO_SKIP says why (the matrix reports its cells SKIPPED).
wait_trino() {
	[[ -n $S15_TRINO_SKIP ]] && return 0
	local deadline=$((SECONDS + $1))
	while ((SECONDS < deadline)); do
		if ! kill -0 "${PIDS[trino]}" 2>/dev/null; then
			S15_TRINO_SKIP="Trino exited while starting: $(grep -m1 -E 'ERROR|Exception' "$RUN_DIR/logs/trino.log" | cut -c1-300)"
			return 0
		fi
		if curl -sf "$TRINO_URL/v1/info" 2>/dev/null | grep -q '"starting":false'; then
			local out
			out=$("$(trino_java)" -jar "$TRINO_DIR/trino-cli.jar" --server "$TRINO_URL" --user interop \
				--execute "SELECT count(*) FROM system.metadata.catalogs" 2>&1) ||
				{ S15_TRINO_SKIP="trino-cli could not query $TRINO_URL: $(tail -n 3 <<<"$out")"; return 0; }
			log "trino up after $((SECONDS - TRINO_T0))s ($(tail -n 1 <<<"$out" | tr -d '"') catalogs, trino-cli answers)"
			return 0
		fi
		sleep 2
	done
	S15_TRINO_SKIP="Trino did not finish starting within $((SECONDS - TRINO_T0))s on this machine ($(nproc) cores)"
}

scenario_15() {
	local dir="$RUN_DIR/s15" topics=(s15_append s15_upsert s15_part s15_upart) t0=$SECONDS n
	mkdir -p "$dir"
	install_trino
	install_iceberg_spark
	create_topics 2 "${topics[@]}"
	# Two nodes, the same topics: s15s writes to MinIO, s15f to a file:// warehouse.
	for n in s15s s15f; do
		FLOE_INTEROP_COMMIT_INTERVAL=1s floe_config $n "${topics[@]}"
		for t in "${topics[@]}"; do table_setting $n "$t" "formats: [iceberg, delta]"; done
		table_setting $n s15_upsert "mode: upsert"
		table_setting $n s15_upsert "compaction: {interval: 1h, min_input_files: 2, hot_min_input_files: 2}" # maintain compacts it, below
		table_setting $n s15_part "partition_by: [{column: region, transform: identity}]"
		table_setting $n s15_upart "mode: upsert"
		table_setting $n s15_upart "partition_by: [{column: region, transform: identity}]"
	done
	mkdir -p "$RUN_DIR/s15f/warehouse"
	sed -i "s|location: s3://$S3_BUCKET/s15f|location: file://$RUN_DIR/s15f/warehouse|" "$RUN_DIR/s15f/floe.yaml"
	start_trino "$(floe_admin s15s)" "$(floe_admin s15f)" # starts while the nodes ingest
	start_floe s15s
	start_floe s15f
	fg_run "$PY" "$INTEROP_DIR/engines_check.py" produce --bootstrap "$KAFKA_BOOTSTRAP" --out "$dir/records.json" ||
		die "s15: producing failed"
	wait_trino 240
	[[ -z $S15_TRINO_SKIP ]] || log "s15: Trino SKIPPED: $S15_TRINO_SKIP"
	local trino=${TRINO_URL} rc=0
	[[ -n $S15_TRINO_SKIP ]] && trino="SKIP:$S15_TRINO_SKIP"
	local ext
	ext=$(ls -d "$VENV"/lib/python3*/site-packages/duckdb_ext/extensions/v*/linux_* 2>/dev/null | head -n1)
	# shellcheck disable=SC2046
	fg_run "$PY" "$INTEROP_DIR/engines_check.py" matrix --records "$dir/records.json" \
		--node "s3=$(floe_admin s15s)" --node "file=$(floe_admin s15f)" --trino "$trino" \
		--spark-jars "$DELTA_JARS,$ICEBERG_SPARK_JARS" --duckdb-ext "${ext:-missing}" --floe-bin "$FLOE_BIN" \
		--work "$dir/work" --out "$dir/matrix.txt" $(reader_s3_args) 2>"$RUN_DIR/logs/engines-check.log" || rc=$?
	stop_proc trino
	stop_floe s15s
	stop_floe s15f
	log "s15: matrix in $dir/matrix.txt (and matrix.txt.json), $((SECONDS - t0))s"
	[[ -z $S15_TRINO_SKIP ]] || log "s15: NOTE the Trino cells were SKIPPED: $S15_TRINO_SKIP"
	((rc == 0)) || die "s15: a cell of the engine matrix failed (see the matrix above; stderr in $RUN_DIR/logs/engines-check.log)"
}
