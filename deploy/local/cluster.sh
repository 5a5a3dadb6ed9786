#!/usr/bin/env bash
# A 3-node Floe cluster with real Kafka and MinIO on this machine, for trying the
# cluster by hand: joining, failover, draining, rolling restarts, `floe status`.
# It reuses the interop suite's installs and services (test/interop/lib.sh): Apache
# Kafka in KRaft mode from Maven Central jars, MinIO built with go install, the Python
# tools for topics and producing. Everything listens on 127.0.0.1 only, and the nodes'
# Raft and internal RPC ports run mutual TLS with a CA and node certificates that
# `start` makes with floe tls (in $FLOE_LOCAL_DIR/run/tls), as a real cluster would.
#
#   deploy/local/cluster.sh start              # install (cached), start Kafka, MinIO, 3 nodes; print ports
#   deploy/local/cluster.sh status             # processes, readiness, then `floe status` of a ready node
#   deploy/local/cluster.sh produce [N] [RATE] # N records per topic (default 10000) at RATE records/s (0: max)
#   deploy/local/cluster.sh stop-node 2        # SIGTERM: node 2 drains (flush, commit, hand over, leave), exits 0
#   deploy/local/cluster.sh kill-node 2        # SIGKILL: the others take node 2's work after failure_timeout
#   deploy/local/cluster.sh start-node 2       # start node 2 again (after kill: same data; after stop: fresh, it left)
#   deploy/local/cluster.sh logs 2             # follow node 2's log
#   deploy/local/cluster.sh stop               # stop the nodes (drain), MinIO and Kafka; data stays until next start
#
# Environment: FLOE_LOCAL_DIR (state, logs and data; default <repo>/.cache/local-cluster),
# FLOE_LOCAL_TOPICS (default "orders clicks"), FLOE_LOCAL_PARTITIONS (default 6),
# FLOE_INTEROP_CACHE (the interop suite's install cache; default <repo>/.cache/interop).
# The first start installs what the interop suite installs (minutes; MinIO's build
# is the slow part) unless `make interop` already filled the cache.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIR=${FLOE_LOCAL_DIR:-$REPO/.cache/local-cluster}
STATE="$DIR/state.sh"
NODES=(node-1 node-2 node-3)
TOPICS=${FLOE_LOCAL_TOPICS:-orders clicks}
PARTITIONS=${FLOE_LOCAL_PARTITIONS:-6}

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
	exit 2
}

# The interop library: installs, service starts (start_kafka, start_minio), ports,
# floe_config. Its RUN_DIR is this cluster's run directory. Sourced at the top level:
# its arrays (PIDS) must be global.
export FLOE_INTEROP_WORK="$DIR/run"
# shellcheck source=../../test/interop/lib.sh
source "$REPO/test/interop/lib.sh"

running() {
	[[ -f $STATE ]] || return 1
	# shellcheck disable=SC1090
	source "$STATE"
	local n
	for n in "${!PIDS[@]}"; do
		kill -0 "${PIDS[$n]}" 2>/dev/null && return 0
	done
	return 1
}

save_state() {
	{
		declare -p PIDS | sed 's/^declare -A/declare -gA/'
		printf 'RUN_DIR=%q\nKAFKA_BOOTSTRAP=%q\nS3_ENDPOINT=%q\nFLOE_BIN=%q\nTOPICS=%q\n' \
			"$RUN_DIR" "$KAFKA_BOOTSTRAP" "$S3_ENDPOINT" "$FLOE_BIN" "$TOPICS"
		printf 'NEXT_ID=%q\n' "${NEXT_ID:-0}"
	} >"$STATE.tmp"
	mv "$STATE.tmp" "$STATE"
}

# load_state: what `start` recorded (pids, addresses, the next record id).
load_state() {
	[[ -f $STATE ]] || { echo "no local cluster (run: $0 start)" >&2; exit 1; }
	# shellcheck disable=SC1090
	source "$STATE"
}

port_of() { sed -n "s/^  $2: 127.0.0.1:\([0-9]*\)$/\1/p" "$RUN_DIR/$1/floe.yaml"; }

node_name() {
	local n=$1
	[[ $n =~ ^[1-3]$ ]] && n="node-$n"
	[[ " ${NODES[*]} " == *" $n "* ]] || { echo "unknown node $1 (1, 2 or 3)" >&2; exit 2; }
	echo "$n"
}

# launch NODE: runs floe serve for NODE in the background, its own session so
# that it outlives this script and a Ctrl-C in the terminal that started it.
launch() {
	local name=$1
	setsid "$FLOE_BIN" serve --config "$RUN_DIR/$name/floe.yaml" >>"$RUN_DIR/logs/floe-$name.log" 2>&1 </dev/null &
	PIDS[floe-$name]=$!
}

wait_ready() {
	local deadline=$((SECONDS + $2)) admin
	admin=$(floe_admin "$1")
	while ((SECONDS < deadline)); do
		curl -sf "http://$admin/readyz" >/dev/null && return 0
		kill -0 "${PIDS[floe-$1]}" 2>/dev/null || break
		sleep 0.5
	done
	tail -n 20 "$RUN_DIR/logs/floe-$1.log" >&2 || true
	die "floe $1 not ready at http://$admin/readyz (log: $RUN_DIR/logs/floe-$1.log)"
}

cmd_start() {
	if running; then
		echo "a local cluster is already running (state $STATE); stop it first" >&2
		exit 1
	fi
	rm -rf "$DIR/run" "$STATE"
	mkdir -p "$DIR"
	# On failure, stop whatever was started; on success, leave it running.
	trap 'rc=$?; if ((rc != 0)); then stop_all; fi; exit $rc' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	init_run_dir
	install_minio background
	install_python
	install_kafka
	build_floe
	wait_minio_install
	start_minio
	start_kafka
	# shellcheck disable=SC2086
	create_topics "$PARTITIONS" $TOPICS >/dev/null

	make_certs
	local name rpcs=() raft rpc
	for name in "${NODES[@]}"; do
		# shellcheck disable=SC2086
		floe_config "$name" $TOPICS
		rpcs+=("127.0.0.1:$(port_of "$name" rpc_addr)")
	done
	local join
	join=$(IFS=,; echo "${rpcs[*]}")
	for name in "${NODES[@]}"; do
		# One warehouse for the whole cluster (floe_config gives each node its own).
		sed -i "s|location: s3://$S3_BUCKET/$name|location: s3://$S3_BUCKET/cluster|" "$RUN_DIR/$name/floe.yaml"
		cat >>"$RUN_DIR/$name/floe.yaml" <<EOF
cluster:
  bootstrap_expect: 3
  join: [$join]
  failure_timeout: 5s
  drain_timeout: 15s
  backup_interval: 30s
  tls:
    ca_file: $RUN_DIR/tls/ca.pem
    cert_file: $RUN_DIR/tls/$name.pem
    key_file: $RUN_DIR/tls/$name-key.pem
EOF
		launch "$name"
	done
	for name in "${NODES[@]}"; do
		wait_ready "$name" 90
	done
	save_state
	trap - EXIT
	print_summary
}

# make_certs: the cluster's CA and one certificate per node (SAN server.floe, which
# every node checks of its peers), made the way docs/security.md tells operators to.
make_certs() {
	local tls="$RUN_DIR/tls" name
	mkdir -p "$tls"
	"$FLOE_BIN" tls ca create --dir "$tls" --common-name "Floe local cluster CA" >/dev/null
	for name in "${NODES[@]}"; do
		"$FLOE_BIN" tls cert create --node "$name" --dir "$tls" --ca "$tls/ca.pem" --key "$tls/ca-key.pem" >/dev/null
	done
}

print_summary() {
	local name
	echo
	echo "Floe local cluster is up (state and logs in $DIR)"
	echo "  kafka      $KAFKA_BOOTSTRAP   topics: $TOPICS ($PARTITIONS partitions each)"
	echo "  minio      $S3_ENDPOINT   bucket $S3_BUCKET, keys $S3_ACCESS_KEY / $S3_SECRET_KEY"
	echo "  warehouse  s3://$S3_BUCKET/cluster   (state backup: s3://$S3_BUCKET/cluster/_floe/state/latest.json)"
	echo "  tls        raft and rpc under mutual TLS, CA and node certificates in $RUN_DIR/tls"
	for name in "${NODES[@]}"; do
		printf '  %-8s   admin %s  raft 127.0.0.1:%s  rpc 127.0.0.1:%s  pid %s\n' "$name" "$(floe_admin "$name")" \
			"$(port_of "$name" raft_addr)" "$(port_of "$name" rpc_addr)" "${PIDS[floe-$name]}"
	done
	echo
	echo "  $FLOE_BIN status --admin-addr $(floe_admin node-1)"
	echo "  $0 produce 10000        # then watch the tables fill"
	echo "  $0 stop-node 2 | kill-node 2 | start-node 2 | logs 2 | status | stop"
}

cmd_status() {
	load_state
	local name pid admin ready=""
	for name in "${NODES[@]}"; do
		pid=${PIDS[floe-$name]:-}
		admin=$(floe_admin "$name")
		if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
			if curl -sf "http://$admin/readyz" >/dev/null; then
				printf '%-8s pid %-7s ready      admin %s\n' "$name" "$pid" "$admin"
				[[ -n $ready ]] || ready=$admin
			else
				printf '%-8s pid %-7s NOT READY  admin %s\n' "$name" "$pid" "$admin"
			fi
		else
			printf '%-8s stopped\n' "$name"
		fi
	done
	local svc
	for svc in kafka minio; do
		pid=${PIDS[$svc]:-}
		if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
			printf '%-8s pid %-7s running\n' "$svc" "$pid"
		else
			printf '%-8s stopped\n' "$svc"
		fi
	done
	if [[ -n $ready ]]; then
		echo
		"$FLOE_BIN" status --admin-addr "$ready"
	fi
}

cmd_produce() {
	load_state
	local count=${1:-10000} rate=${2:-0}
	# shellcheck disable=SC2086
	produce "$count" "$rate" "$NEXT_ID" $TOPICS
	NEXT_ID=$((NEXT_ID + count))
	save_state
}

cmd_stop_node() {
	load_state
	local name
	name=$(node_name "$1")
	log "SIGTERM $name: it drains (flush, commit, hand over, leave) and exits"
	stop_proc "floe-$name" TERM
	touch "$RUN_DIR/$name/left"
	save_state
}

cmd_kill_node() {
	load_state
	local name
	name=$(node_name "$1")
	log "SIGKILL $name: the others take its partitions and committer roles after cluster.failure_timeout"
	stop_proc "floe-$name" KILL
	save_state
}

cmd_start_node() {
	load_state
	local name pid
	name=$(node_name "$1")
	pid=${PIDS[floe-$name]:-}
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		echo "$name is running (pid $pid)" >&2
		exit 1
	fi
	if [[ -f $RUN_DIR/$name/left ]]; then
		# It left the group: its old Raft state names a group it is no longer in.
		log "$name left the group when it stopped: starting it with an empty data dir, it joins as a new member"
		rm -rf "$RUN_DIR/$name/data" "$RUN_DIR/$name/left"
	fi
	launch "$name"
	wait_ready "$name" 90
	save_state
	log "$name up (admin $(floe_admin "$name"), pid ${PIDS[floe-$name]})"
}

cmd_logs() {
	load_state
	tail -n 50 -f "$RUN_DIR/logs/floe-$(node_name "$1").log"
}

cmd_stop() {
	if [[ ! -f $STATE ]]; then
		echo "no local cluster" >&2
		return 0
	fi
	load_state
	local name
	# All nodes at once: each drains; the last one stops without leaving.
	for name in "${NODES[@]}"; do
		[[ -n ${PIDS[floe-$name]:-} ]] && kill -TERM "${PIDS[floe-$name]}" 2>/dev/null || true
	done
	for name in "${NODES[@]}"; do stop_proc "floe-$name"; done
	stop_minio
	stop_kafka
	stop_all
	rm -f "$STATE"
	log "stopped; data and logs stay in $DIR/run until the next start"
}

case ${1:-} in
start) cmd_start ;;
status) cmd_status ;;
produce) shift; cmd_produce "$@" ;;
stop-node) [[ $# -eq 2 ]] || usage; cmd_stop_node "$2" ;;
kill-node) [[ $# -eq 2 ]] || usage; cmd_kill_node "$2" ;;
start-node) [[ $# -eq 2 ]] || usage; cmd_start_node "$2" ;;
logs) [[ $# -eq 2 ]] || usage; cmd_logs "$2" ;;
stop) cmd_stop ;;
*) usage ;;
esac
