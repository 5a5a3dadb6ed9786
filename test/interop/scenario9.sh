# shellcheck shell=bash
# Interop scenario 9: catalogs. Sourced by run.sh after scenarios.sh.
#
# One Floe node (lib.sh starts single nodes; the cluster tests cover several)
# with bearer-token auth, its Glue mirror pointed at moto and its REST mirror
# pointed at the Apache Iceberg REST catalog reference server
# (RESTCatalogServer from iceberg-open-api's test fixtures on Maven Central).
# While records flow: a Glue entry is altered by hand and must be restored,
# and moto is stopped for S9_OUTAGE seconds, during which Floe must keep
# committing, show the Glue error in status, and then catch up. At the end:
# PyIceberg's RestCatalog and Iceberg Java's RESTCatalog load and scan the
# table through Floe's endpoint (a client without a token is refused),
# PyIceberg's GlueCatalog loads and scans it through moto, the reference
# server points at Floe's current metadata, and both readers check the table.

SCENARIO_TITLES[9]="catalogs: Floe's REST endpoint, Glue (moto) and the reference REST catalog; hand edit restored, moto down ${FLOE_S9_OUTAGE:-60}s"
SCENARIO_ORDER+=(9)

S9_OUTAGE=${FLOE_S9_OUTAGE:-60}
S9_TOKEN=interop-read-token-0123456789
RESTREF_DIR="$CACHE/iceberg-rest-reference"
RESTREF_PORT="" RESTREF_URI=""

# install_rest_reference: the reference server's jars (classpath file in the cache).
install_rest_reference() {
	local stamp
	stamp=$(stamp_of "$INTEROP_DIR/restserver/pom.xml")
	[[ -f $RESTREF_DIR/.stamp && $(cat "$RESTREF_DIR/.stamp") == "$stamp" ]] && return 0
	log "fetching the Iceberg REST catalog reference server from Maven Central"
	rm -rf "$RESTREF_DIR" && mkdir -p "$RESTREF_DIR"
	cp "$INTEROP_DIR/restserver/pom.xml" "$RESTREF_DIR/"
	(cd "$RESTREF_DIR" && mvn_q -Dmaven.repo.local="$M2" dependency:build-classpath -Dmdep.outputFile="$RESTREF_DIR/classpath.txt") ||
		die "iceberg rest reference server: resolving $INTEROP_DIR/restserver/pom.xml failed"
	echo "$stamp" >"$RESTREF_DIR/.stamp"
}

# start_rest_reference: RESTCatalogServer on a free port; a JdbcCatalog on
# in-memory SQLite reading metadata from MinIO with S3FileIO.
start_rest_reference() {
	install_rest_reference
	read -r RESTREF_PORT < <(free_ports 1)
	RESTREF_URI="http://127.0.0.1:$RESTREF_PORT"
	CATALOG_REST_PORT=$RESTREF_PORT CATALOG_WAREHOUSE="s3://$S3_BUCKET/s9-reference" \
		CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO CATALOG_S3_ENDPOINT="$S3_ENDPOINT" \
		CATALOG_S3_PATH__STYLE__ACCESS=true CATALOG_S3_ACCESS__KEY__ID="$S3_ACCESS_KEY" \
		CATALOG_S3_SECRET__ACCESS__KEY="$S3_SECRET_KEY" CATALOG_CLIENT_REGION="$S3_REGION" AWS_REGION="$S3_REGION" \
		java -Xmx512m -cp "$(cat "$RESTREF_DIR/classpath.txt")" org.apache.iceberg.rest.RESTCatalogServer \
		>>"$RUN_DIR/logs/rest-reference.log" 2>&1 &
	track rest-reference $!
	wait_port rest-reference "$RESTREF_PORT" 90
	curl -sf "$RESTREF_URI/v1/config" >/dev/null || die "rest reference server: /v1/config failed at $RESTREF_URI"
	log "Iceberg REST reference server up at $RESTREF_URI"
}

# restart_moto: moto again on the same port (Floe's config names it). moto
# keeps its data in memory, so Glue comes back empty and Floe recreates the
# database and table at its next sync.
restart_moto() {
	"$VENV/bin/moto_server" -H 127.0.0.1 -p "$MOTO_PORT" >>"$RUN_DIR/logs/moto.log" 2>&1 &
	track moto $!
	wait_port moto "$MOTO_PORT" 60
}

# s9_catalog FIELD: the catalog sync status of interop.s9_events, one line
# per catalog: name in_sync lag failures last_error.
s9_catalogs() {
	curl -sf "http://$(floe_admin s9)/v1/status" | "$PY" -c '
import json, sys
for t in json.load(sys.stdin).get("tables", []):
    if t["table"] == "interop.s9_events":
        for c in t.get("catalogs") or []:
            print(c["catalog"], c["in_sync"], round(c["lag_seconds"], 1), c["failures"], (c.get("last_error") or "-")[:160])
' || true
}

# s9_wait_in_sync TIMEOUT: until both mirrors point at Floe's current metadata.
s9_wait_in_sync() {
	local deadline=$((SECONDS + $1)) st loc glue
	while ((SECONDS < deadline)); do
		st=$(s9_catalogs)
		# Fails until the table's first commit: keep polling.
		loc=$("$PY" "$INTEROP_DIR/interop.py" metadata-locations --admin "$(floe_admin s9)" interop.s9_events 2>/dev/null | cut -f2) || loc=""
		glue=$("$PY" "$INTEROP_DIR/catalog_check.py" glue-location --endpoint "$MOTO_ENDPOINT" --table interop.s9_events | cut -f1)
		if [[ -n $loc && $(grep -c ' True ' <<<"$st") == 2 && $glue == "$loc" ]]; then
			log "catalogs in sync at $loc"
			return 0
		fi
		sleep 2
	done
	log "status: $st; glue: $glue; floe: $loc"
	die "the catalogs did not catch up within $1s"
}

scenario_9() {
	local n=s9 t=s9_events admin
	start_rest_reference
	create_topics 4 $t
	floe_config $n $t
	cat >>"$RUN_DIR/$n/floe.yaml" <<EOF
auth:
  tokens: "$S9_TOKEN:read"
catalogs:
  sync_interval: 2s
  sync_timeout: 10s
  glue: {enabled: true, endpoint: "$MOTO_ENDPOINT", region: us-east-1}
  rest:
    - {name: reference, uri: "$RESTREF_URI"}
EOF
	AWS_ACCESS_KEY_ID=interop AWS_SECRET_ACCESS_KEY=interop AWS_EC2_METADATA_DISABLED=true start_floe $n
	admin=$(floe_admin $n)
	produce_bg 45000 300 0 $t # 150 s of records: the outage and the restart happen mid-stream

	# Glue receives the table; a hand edit is overwritten at a later sync.
	s9_wait_in_sync 90
	"$PY" "$INTEROP_DIR/catalog_check.py" glue-alter --endpoint "$MOTO_ENDPOINT" --table interop.$t \
		--location "s3://elsewhere/metadata/00001-hand-edit.metadata.json"
	local deadline=$((SECONDS + 60)) glue=""
	while ((SECONDS < deadline)); do
		glue=$("$PY" "$INTEROP_DIR/catalog_check.py" glue-location --endpoint "$MOTO_ENDPOINT" --table interop.$t | cut -f1)
		[[ $glue == s3://$S3_BUCKET/* ]] && break
		sleep 1
	done
	[[ $glue == s3://$S3_BUCKET/* ]] || die "the hand edit of the Glue entry was not overwritten (metadata_location $glue)"
	log "hand edit of the Glue entry overwritten (now $glue)"

	# moto down mid-stream: commits go on, status shows the Glue error.
	alive producer
	local rows_before rows_after st
	rows_before=$("$PY" "$INTEROP_DIR/interop.py" committed-rows --admin "$admin")
	log "stopping moto for ${S9_OUTAGE}s (committed rows $rows_before)"
	stop_moto
	sleep "$S9_OUTAGE"
	rows_after=$("$PY" "$INTEROP_DIR/interop.py" committed-rows --admin "$admin")
	st=$(s9_catalogs)
	log "after ${S9_OUTAGE}s without Glue: committed rows $rows_after; catalogs: $(tr '\n' '|' <<<"$st")"
	((rows_after > rows_before)) || die "Floe committed nothing while Glue was down ($rows_before -> $rows_after rows)"
	grep -q '^glue False' <<<"$st" || die "status does not show Glue behind while moto is down: $st"
	grep '^glue ' <<<"$st" | grep -qv ' -$' || die "status shows no Glue error while moto is down: $st"
	restart_moto
	log "moto back on $MOTO_ENDPOINT (empty: Floe must recreate the database and table)"

	wait_producer
	expect_tables $t
	wait_caught_up $n 300 $t
	s9_wait_in_sync 120
	verify_tables $n $t

	# Reading through the catalogs.
	local floe_uri="http://$admin/iceberg" loc rloc gloc
	loc=$("$PY" "$INTEROP_DIR/interop.py" metadata-locations --admin "$admin" interop.$t | cut -f2)
	"$PY" "$INTEROP_DIR/catalog_check.py" rest-refused --uri "$floe_uri" --table interop.$t || die "Floe's endpoint let a client without a token in"
	# shellcheck disable=SC2046
	rloc=$("$PY" "$INTEROP_DIR/catalog_check.py" rest --uri "$floe_uri" --token "$S9_TOKEN" --header X-Floe-Consistency=strong \
		--table interop.$t --expect "$RUN_DIR/expect/$t.json" $(reader_s3_args)) || die "PyIceberg could not read interop.$t through Floe's REST catalog"
	[[ $rloc == "$loc" ]] || die "Floe's REST catalog returned $rloc, status says $loc"
	run_java_check --rest-uri "$floe_uri" --rest-token "$S9_TOKEN" --rest-table interop.$t --expect "$RUN_DIR/expect/$t.json" ||
		die "Iceberg Java's RESTCatalog could not read interop.$t through Floe's REST catalog"
	# shellcheck disable=SC2046
	gloc=$("$PY" "$INTEROP_DIR/catalog_check.py" glue --endpoint "$MOTO_ENDPOINT" --table interop.$t \
		--expect "$RUN_DIR/expect/$t.json" $(reader_s3_args)) || die "PyIceberg's Glue catalog could not read interop.$t from moto"
	[[ $gloc == "$loc" ]] || die "Glue points at $gloc, Floe at $loc"
	# shellcheck disable=SC2046
	rloc=$("$PY" "$INTEROP_DIR/catalog_check.py" rest --uri "$RESTREF_URI" --table interop.$t \
		--expect "$RUN_DIR/expect/$t.json" $(reader_s3_args)) || die "PyIceberg could not read interop.$t through the reference REST catalog"
	[[ $rloc == "$loc" ]] || die "the reference REST catalog points at $rloc, Floe at $loc"
	grep -q "drop and register" "$RUN_DIR/logs/floe-$n.log" && log "reference server: updates by drop and register (it ignores register's overwrite)" || true
	log "catalog sync status at the end: $(s9_catalogs | tr '\n' '|')"
	stop_floe $n
	stop_proc rest-reference
}
