# shellcheck shell=bash
# Interop scenario 9: catalogs. Sourced by run.sh after scenarios.sh.
#
# A 3-node Floe cluster (one Raft group, one warehouse) with bearer-token
# auth, its Glue mirror pointed at moto and its REST mirror pointed at the
# Apache Iceberg REST catalog reference server (RESTCatalogServer from
# iceberg-open-api's test fixtures on Maven Central). The table's committer
# syncs the mirrors and keeps the sync errors in its status. While records
# flow: a Glue entry is altered by hand and must be restored, and moto is
# stopped for S9_OUTAGE seconds, during which Floe must keep committing,
# show the Glue error in status, and then catch up. At the end, through
# EACH node's endpoint: PyIceberg's RestCatalog and Iceberg Java's
# RESTCatalog load and scan the table at the leader's current metadata
# location, and a client without a token is refused. PyIceberg's
# GlueCatalog loads and scans it through moto, the reference server points
# at Floe's current metadata, and both readers check the table.

SCENARIO_TITLES[9]="catalogs: Floe's REST endpoint on each node of a 3-node cluster, Glue (moto) and the reference REST catalog; hand edit restored, moto down ${FLOE_S9_OUTAGE:-60}s"
SCENARIO_ORDER+=(9)

S9_OUTAGE=${FLOE_S9_OUTAGE:-60}
S9_TOKEN=interop-read-token-0123456789
export S9_TOKEN
S9_NODES=(s9a s9b s9c)
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

# s9_catalogs: the catalog sync status of interop.s9_events, one line per
# catalog: name in_sync lag failures last_error. From the committer's own
# report (failures and last_error are kept there), else from any node's.
s9_catalogs() {
	local n admins=()
	for n in "${S9_NODES[@]}"; do admins+=("$(floe_admin "$n")"); done
	"$PY" -c '
import json, os, sys, urllib.request
chosen = None
for a in sys.argv[1:]:
    try:
        req = urllib.request.Request(f"http://{a}/v1/status", headers={"Authorization": "Bearer " + os.environ["S9_TOKEN"]})
        rep = json.load(urllib.request.urlopen(req, timeout=5))
    except Exception:
        continue
    t = next((t for t in rep.get("tables", []) if t["table"] == "interop.s9_events"), None)
    if t is not None and (chosen is None or t.get("committer") == rep.get("node")):
        chosen = t
for c in (chosen or {}).get("catalogs") or []:
    print(c["catalog"], c["in_sync"], round(c["lag_seconds"], 1), c["failures"], (c.get("last_error") or "-")[:160])
' "${admins[@]}" || true
}

# s9_status NODE: GET /v1/status with the scenario's read token (the admin
# API wants one once tokens are configured).
s9_status() { curl -sf -H "Authorization: Bearer $S9_TOKEN" "http://$(floe_admin "$1")/v1/status"; }

# s9_leader: the name of the Raft leader (node ids are the names), from the
# first node that answers.
s9_leader() {
	local n l
	for n in "${S9_NODES[@]}"; do
		l=$(s9_status "$n" | "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("leader") or "")' 2>/dev/null) || l=""
		[[ -n $l ]] && echo "$l" && return 0
	done
	die "no node of the scenario 9 cluster names a leader"
}

# s9_start_cluster TOPIC: lib.sh's floe_config for each of the three nodes,
# then one shared warehouse (floe_config gives each node its own), a cluster
# section forming the group of the three (as deploy/local/cluster.sh does),
# auth and the catalog mirrors. Starts all three, then waits for each to be
# ready (a node is ready only once the group has formed).
s9_start_cluster() {
	local t=$1 n rpcs=() join
	for n in "${S9_NODES[@]}"; do
		floe_config "$n" "$t"
		rpcs+=("$(sed -n 's/^  rpc_addr: //p' "$RUN_DIR/$n/floe.yaml")")
	done
	join=$(IFS=,; echo "${rpcs[*]}")
	for n in "${S9_NODES[@]}"; do
		sed -i "s|^  location: s3://$S3_BUCKET/$n\$|  location: s3://$S3_BUCKET/s9|" "$RUN_DIR/$n/floe.yaml"
		cat >>"$RUN_DIR/$n/floe.yaml" <<EOF
cluster:
  bootstrap_expect: 3
  join: [$join]
auth:
  tokens: "$S9_TOKEN:read"
catalogs:
  sync_interval: 2s
  sync_timeout: 10s
  glue: {enabled: true, endpoint: "$MOTO_ENDPOINT", region: us-east-1}
  rest:
    - {name: reference, uri: "$RESTREF_URI"}
EOF
		AWS_ACCESS_KEY_ID=interop AWS_SECRET_ACCESS_KEY=interop AWS_EC2_METADATA_DISABLED=true \
			"$FLOE_BIN" serve --config "$RUN_DIR/$n/floe.yaml" >>"$RUN_DIR/logs/floe-$n.log" 2>&1 &
		track "floe-$n" $!
	done
	local deadline=$((SECONDS + 90)) admin
	for n in "${S9_NODES[@]}"; do
		admin=$(floe_admin "$n")
		until curl -sf "http://$admin/readyz" >/dev/null; do
			alive "floe-$n"
			((SECONDS < deadline)) || {
				tail -n 30 "$RUN_DIR/logs/floe-$n.log" >&2
				die "floe $n: not ready at http://$admin/readyz within 90s"
			}
			sleep 0.5
		done
		log "floe $n up (admin $admin, pid ${PIDS[floe-$n]})"
	done
	log "3-node cluster formed: leader $(s9_leader), warehouse s3://$S3_BUCKET/s9"
}

# s9_location NODE: interop.s9_events's metadata location in NODE's status.
s9_location() {
	"$PY" "$INTEROP_DIR/interop.py" metadata-locations --admin "$(floe_admin "$1")" interop.s9_events | cut -f2
}

# s9_synced: how many catalogs recorded a sync of interop.s9_events (the
# replicated record, from any node).
s9_synced() {
	s9_status "$(s9_leader)" | "$PY" -c '
import json, sys
for t in json.load(sys.stdin).get("tables", []):
    if t["table"] == "interop.s9_events":
        print(sum(1 for c in t.get("catalogs") or [] if c.get("metadata_location")))
' || true
}

# s9_wait_in_sync TIMEOUT [received]: until both mirrors point at Floe's
# current metadata. With "received", for use while records flow, until Glue
# points at one of Floe's metadata files and both catalogs recorded a sync:
# in a cluster each node's worker flushes on its own schedule, so the table
# commits more often than the mirrors sync (sync_interval) and is rarely
# level with them mid-stream.
s9_wait_in_sync() {
	local deadline=$((SECONDS + $1)) mode=${2:-level} st loc glue
	while ((SECONDS < deadline)); do
		st=$(s9_catalogs)
		# Fails until the table's first commit: keep polling.
		loc=$("$PY" "$INTEROP_DIR/interop.py" metadata-locations --admin "$(floe_admin "$(s9_leader)")" interop.s9_events 2>/dev/null | cut -f2) || loc=""
		glue=$("$PY" "$INTEROP_DIR/catalog_check.py" glue-location --endpoint "$MOTO_ENDPOINT" --table interop.s9_events | cut -f1)
		if [[ $mode == received && $glue == s3://$S3_BUCKET/s9/* && $(s9_synced) == 2 ]]; then
			log "catalogs received the table; Glue at $glue, Floe at $loc"
			return 0
		fi
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
	local t=s9_events n admin
	export FLOE_TOKEN=$S9_TOKEN # floe status and interop.py's status reads
	start_rest_reference
	create_topics 4 $t
	s9_start_cluster $t
	admin=$(floe_admin s9a) # any node answers status from the replicated state
	produce_bg 45000 300 0 $t # 150 s of records: the outage and the restart happen mid-stream

	# Glue receives the table; a hand edit is overwritten at a later sync.
	s9_wait_in_sync 90 received
	log "catalog sync status (committer): $(s9_catalogs | tr '\n' '|')"
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
	local leader
	leader=$(s9_leader)
	wait_caught_up "$leader" 300 $t
	s9_wait_in_sync 120
	verify_tables "$leader" $t

	# Reading through Floe's endpoint on each node: the leader's current
	# metadata location, every produced offset once. Compaction can commit
	# meanwhile (a replace snapshot, same rows): a read counts when the
	# leader's location was the same before and after it.
	local loc rloc jloc gloc out uri before after try ok
	for n in "${S9_NODES[@]}"; do
		uri="http://$(floe_admin "$n")/iceberg"
		"$PY" "$INTEROP_DIR/catalog_check.py" rest-refused --uri "$uri" --table interop.$t || die "Floe's endpoint on $n let a client without a token in"
		ok=""
		for try in 1 2 3; do
			before=$(s9_location "$leader")
			# shellcheck disable=SC2046
			rloc=$("$PY" "$INTEROP_DIR/catalog_check.py" rest --uri "$uri" --token "$S9_TOKEN" --header X-Floe-Consistency=strong \
				--table interop.$t --expect "$RUN_DIR/expect/$t.json" $(reader_s3_args)) || die "PyIceberg could not read interop.$t through $n's REST catalog"
			out=$(run_java_check --rest-uri "$uri" --rest-token "$S9_TOKEN" --rest-table interop.$t --expect "$RUN_DIR/expect/$t.json") || {
				printf '%s\n' "$out"
				die "Iceberg Java's RESTCatalog could not read interop.$t through $n's REST catalog"
			}
			printf '%s\n' "$out"
			jloc=$(sed -n 's/^OK iceberg-java table [^ ]* (\(.*\)):.*/\1/p' <<<"$out")
			after=$(s9_location "$leader")
			if [[ $before != "$after" ]]; then
				log "node $n: interop.$t committed during the reads ($before -> $after); reading again"
				continue
			fi
			[[ $rloc == "$after" ]] || die "$n's REST catalog returned $rloc to PyIceberg, the leader $leader has $after"
			[[ $jloc == "$after" ]] || die "$n's REST catalog returned $jloc to Iceberg Java, the leader $leader has $after"
			log "node $n$([[ $n == "$leader" ]] && echo ' (leader)'): PyIceberg and Iceberg Java read interop.$t at the leader's $after through $uri"
			ok=1
			break
		done
		[[ -n $ok ]] || die "interop.$t committed during each of 3 reads through $n"
	done
	# The mirrors again level with Floe. Maintenance (expiry, compaction)
	# may commit while a reader scans: a mirror then matches Floe's location
	# from before or after the scan; three tries.
	local try after glue_ok="" rest_ok=""
	for try in 1 2 3; do
		s9_wait_in_sync 60
		loc=$(s9_location "$leader")
		# shellcheck disable=SC2046
		gloc=$("$PY" "$INTEROP_DIR/catalog_check.py" glue --endpoint "$MOTO_ENDPOINT" --table interop.$t \
			--expect "$RUN_DIR/expect/$t.json" $(reader_s3_args)) || die "PyIceberg's Glue catalog could not read interop.$t from moto"
		# shellcheck disable=SC2046
		rloc=$("$PY" "$INTEROP_DIR/catalog_check.py" rest --uri "$RESTREF_URI" --table interop.$t \
			--expect "$RUN_DIR/expect/$t.json" $(reader_s3_args)) || die "PyIceberg could not read interop.$t through the reference REST catalog"
		after=$(s9_location "$leader")
		[[ $gloc == "$loc" || $gloc == "$after" ]] && glue_ok=1
		[[ $rloc == "$loc" || $rloc == "$after" ]] && rest_ok=1
		[[ -n $glue_ok && -n $rest_ok ]] && break
		log "try $try: Floe at $loc then $after; Glue at $gloc, reference REST at $rloc"
		glue_ok="" rest_ok=""
	done
	[[ -n $glue_ok ]] || die "Glue points at $gloc, Floe at $loc (then $after)"
	[[ -n $rest_ok ]] || die "the reference REST catalog points at $rloc, Floe at $loc (then $after)"
	cat "$RUN_DIR"/logs/floe-s9?.log | grep -q "drop and register" && log "reference server: updates by drop and register (it ignores register's overwrite)" || true
	log "catalog sync status at the end: $(s9_catalogs | tr '\n' '|')"
	for n in "${S9_NODES[@]}"; do stop_floe "$n"; done
	stop_proc rest-reference
	unset FLOE_TOKEN
}
