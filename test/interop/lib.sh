# shellcheck shell=bash
# Reusable pieces of the Floe interop suite: installing and caching the real
# services and readers, starting and stopping them on free 127.0.0.1 ports,
# running Floe, producing, waiting and checking. Sourced by run.sh; a scenario
# is a shell function made of these calls (see scenarios.sh and README.md).
#
# Every start_* function records the process so stop_all (run.sh's EXIT trap)
# stops it; a service that cannot be installed or started calls die with the
# service's name and the reason. There is no fallback to a fake.

INTEROP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$INTEROP_DIR/../.." && pwd)
CACHE=${FLOE_INTEROP_CACHE:-$REPO/.cache/interop}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
M2="$CACHE/m2"

# Pinned versions. Changing one re-installs that piece on the next run.
MINIO_VERSION=${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c} # github.com/minio/minio (no semver tags: pseudo-version)
APICURIO_VERSION=${APICURIO_VERSION:-3.3.3}                         # io.apicurio:apicurio-registry-app:<v>:tar.gz:all
# kafka/pom.xml pins Kafka; java/pom.xml pins Iceberg Java; requirements.txt pins Python.

S3_ACCESS_KEY=interopadmin
S3_SECRET_KEY=interopsecret
S3_REGION=us-east-1
S3_BUCKET=interop

VENV="$CACHE/venv"
PY="$VENV/bin/python"

# ------------------------------------------------------------------ logging, timing

log() { printf '%s [interop] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() {
	printf '%s [interop] FAILED: %s\n' "$(date +%H:%M:%S)" "$*" >&2
	exit 1
}

declare -a PHASE_NAMES=() PHASE_SECS=()
PHASE_NAME="" PHASE_START=0
# phase NAME: ends the current phase (printing its time) and starts NAME.
phase() {
	phase_end
	PHASE_NAME=$1
	PHASE_START=$(date +%s)
	log "=== $PHASE_NAME"
}
phase_end() {
	if [[ -n $PHASE_NAME ]]; then
		local took=$(($(date +%s) - PHASE_START))
		PHASE_NAMES+=("$PHASE_NAME")
		PHASE_SECS+=("$took")
		log "=== $PHASE_NAME done in ${took}s"
		PHASE_NAME=""
	fi
}
phase_failed() {
	if [[ -n $PHASE_NAME ]]; then
		PHASE_NAME="$PHASE_NAME (FAILED)"
		phase_end
	fi
}
print_timings() {
	local i
	echo "phase timings:"
	for i in "${!PHASE_NAMES[@]}"; do
		printf '  %-48s %5ss\n' "${PHASE_NAMES[$i]}" "${PHASE_SECS[$i]}"
	done
}

# ------------------------------------------------------------------ run directory, processes

# RUN_DIR holds this run's logs, service data and generated configs.
init_run_dir() {
	if [[ -n ${FLOE_INTEROP_WORK:-} && -e $FLOE_INTEROP_WORK && -n $(ls -A "$FLOE_INTEROP_WORK") ]]; then
		die "FLOE_INTEROP_WORK=$FLOE_INTEROP_WORK is not empty (services would find old data)"
	fi
	RUN_DIR=${FLOE_INTEROP_WORK:-$(mktemp -d /tmp/floe-interop.XXXXXX)}
	mkdir -p "$RUN_DIR/logs" "$RUN_DIR/expect" "$RUN_DIR/produced"
	: >"$RUN_DIR/tables.tsv"
	log "run directory $RUN_DIR"
}

declare -A PIDS=()
# track NAME PID: remember a started process so stop_all ends it.
track() { PIDS[$1]=$2; }

# stop_proc NAME [SIGNAL]: stops a tracked process (TERM, then KILL after 20s).
stop_proc() {
	local name=$1 sig=${2:-TERM} pid=${PIDS[$1]:-}
	[[ -n $pid ]] || return 0
	unset "PIDS[$name]"
	kill -0 "$pid" 2>/dev/null || return 0
	kill "-$sig" "$pid" 2>/dev/null || true
	local i
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name (pid $pid) did not stop on SIG$sig; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

stop_all() {
	local name
	for name in "${!PIDS[@]}"; do
		stop_proc "$name"
	done
}

# alive NAME: dies naming the service if its process has exited.
alive() {
	local pid=${PIDS[$1]:-}
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && return 0
	tail -n 30 "$RUN_DIR/logs/$1.log" >&2 2>/dev/null || true
	die "$1 is not running (log: $RUN_DIR/logs/$1.log)"
}

# fg_run CMD...: runs CMD in the background and waits for it, so that a TERM
# or INT reaches run.sh's trap at once (bash defers traps while a foreground
# child runs); the trap's stop_all then stops CMD too.
fg_run() {
	local pid rc=0
	"$@" &
	pid=$!
	track fg "$pid"
	wait "$pid" || rc=$?
	unset "PIDS[fg]"
	return "$rc"
}

free_ports() { "$PY" "$INTEROP_DIR/interop.py" free-ports "$1"; }

# wait_port NAME PORT TIMEOUT: waits for a listener on 127.0.0.1:PORT, failing
# with the service's log if its process exits or the time runs out.
wait_port() {
	local name=$1 port=$2 timeout=$3 pid=${PIDS[$1]:-} deadline=$((SECONDS + $3))
	while ((SECONDS < deadline)); do
		(: </dev/tcp/127.0.0.1/"$port") 2>/dev/null && return 0
		if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$RUN_DIR/logs/$name.log" >&2 || true
			die "$name exited before listening on 127.0.0.1:$port (log: $RUN_DIR/logs/$name.log)"
		fi
		sleep 0.2
	done
	tail -n 30 "$RUN_DIR/logs/$name.log" >&2 || true
	die "$name did not listen on 127.0.0.1:$port within ${timeout}s (log: $RUN_DIR/logs/$name.log)"
}

# mvn_q ARGS: quiet batch Maven without the ANSI codes Maven 3.8 prints anyway.
mvn_q() {
	mvn -q -B "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
	return "${PIPESTATUS[0]}"
}

stamp_of() { cat "$@" | sha256sum | cut -c1-16; }

# ------------------------------------------------------------------ installs (cached)

install_python() {
	local stamp
	stamp=$(stamp_of "$INTEROP_DIR/requirements.txt")
	if [[ -x $PY && -f $VENV/.stamp && $(cat "$VENV/.stamp") == "$stamp" ]]; then
		return 0
	fi
	log "installing Python tools into $VENV"
	rm -rf "$VENV"
	python3 -m venv "$VENV" || die "python venv: python3 -m venv $VENV failed"
	"$VENV/bin/pip" install -q --disable-pip-version-check -r "$INTEROP_DIR/requirements.txt" ||
		die "python tools (pyiceberg, moto, confluent-kafka, boto3): pip install -r requirements.txt failed"
	echo "$stamp" >"$VENV/.stamp"
}

install_kafka() {
	local stamp dir="$CACHE/kafka"
	stamp=$(stamp_of "$INTEROP_DIR/kafka/pom.xml")
	if [[ -f $dir/.stamp && $(cat "$dir/.stamp") == "$stamp" ]]; then
		return 0
	fi
	log "fetching the Kafka broker jars from Maven Central"
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$INTEROP_DIR/kafka" && mvn_q -Dmaven.repo.local="$M2" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$dir/jars") ||
		die "kafka: mvn dependency:copy-dependencies of org.apache.kafka:kafka_2.13 failed"
	echo "$stamp" >"$dir/.stamp"
}

# install_minio [background]: go install github.com/minio/minio@MINIO_VERSION
# into the cache. With "background" it returns at once; wait_minio_install waits.
MINIO_BIN="$CACHE/bin/minio-$MINIO_VERSION"
MINIO_INSTALL_PID=""
install_minio() {
	[[ -x $MINIO_BIN ]] && return 0
	log "building MinIO $MINIO_VERSION with go install (several minutes on a cold machine)"
	mkdir -p "$CACHE/bin" "$CACHE/logs"
	local gobin="$CACHE/bin/.minio-build"
	rm -rf "$gobin"
	mkdir -p "$gobin"
	local cmd="GOBIN='$gobin' go install -trimpath github.com/minio/minio@$MINIO_VERSION && mv '$gobin/minio' '$MINIO_BIN'"
	if [[ ${1:-} == background ]]; then
		# Its own process group, so that stop_minio_install ends go and its compilers too.
		setsid bash -c "$cmd" >"$CACHE/logs/minio-build.log" 2>&1 &
		MINIO_INSTALL_PID=$!
	else
		bash -c "$cmd" >"$CACHE/logs/minio-build.log" 2>&1 ||
			{ tail -n 20 "$CACHE/logs/minio-build.log" >&2; die "minio: go install github.com/minio/minio@$MINIO_VERSION failed"; }
	fi
}
stop_minio_install() {
	[[ -n $MINIO_INSTALL_PID ]] || return 0
	kill -- "-$MINIO_INSTALL_PID" 2>/dev/null || kill "$MINIO_INSTALL_PID" 2>/dev/null || true
	wait "$MINIO_INSTALL_PID" 2>/dev/null || true
	MINIO_INSTALL_PID=""
}
wait_minio_install() {
	[[ -n $MINIO_INSTALL_PID ]] || return 0
	if ! wait "$MINIO_INSTALL_PID"; then
		tail -n 20 "$CACHE/logs/minio-build.log" >&2
		die "minio: go install github.com/minio/minio@$MINIO_VERSION failed (log $CACHE/logs/minio-build.log)"
	fi
	MINIO_INSTALL_PID=""
	[[ -x $MINIO_BIN ]] || die "minio: build finished but $MINIO_BIN is missing"
}

install_registry() {
	local dir="$CACHE/apicurio-$APICURIO_VERSION"
	[[ -f $dir/quarkus-run.jar ]] && return 0
	log "fetching Apicurio Registry $APICURIO_VERSION from Maven Central"
	local tmp="$CACHE/apicurio-download"
	rm -rf "$tmp" "$dir"
	mvn_q -Dmaven.repo.local="$M2" dependency:copy \
		-Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" -DoutputDirectory="$tmp" ||
		die "schema registry: fetching io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all failed"
	mkdir -p "$dir"
	tar xzf "$tmp"/apicurio-registry-app-*.tar.gz -C "$dir" || die "schema registry: unpacking Apicurio failed"
	rm -rf "$tmp"
	[[ -f $dir/quarkus-run.jar ]] || die "schema registry: $dir/quarkus-run.jar missing after unpacking"
}

# Apicurio Registry 3.x is compiled for Java 21; the machine's default Java is
# 17, and this kind of machine carries a second (Temurin) JDK beside it.
registry_java() {
	if [[ -n ${FLOE_INTEROP_REGISTRY_JAVA:-} ]]; then
		echo "$FLOE_INTEROP_REGISTRY_JAVA"
		return
	fi
	local j v
	for j in /usr/lib/jvm/*/bin/java; do
		[[ -x $j ]] || continue
		v=$("$j" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/{print $2}')
		if [[ ${v%%.*} =~ ^[0-9]+$ ]] && ((${v%%.*} >= 21)); then
			echo "$j"
			return
		fi
	done
}

JAVA_CHECK_DIR="$CACHE/java-check"
install_java_check() {
	local stamp
	stamp=$(stamp_of "$INTEROP_DIR/java/pom.xml" $(find "$INTEROP_DIR/java/src" -type f | sort))
	if [[ -f $JAVA_CHECK_DIR/.stamp && $(cat "$JAVA_CHECK_DIR/.stamp") == "$stamp" ]]; then
		return 0
	fi
	log "building the Iceberg Java checker"
	rm -rf "$JAVA_CHECK_DIR"
	mkdir -p "$JAVA_CHECK_DIR"
	# Build outside the source tree so the repo stays clean.
	cp -r "$INTEROP_DIR/java/pom.xml" "$INTEROP_DIR/java/src" "$JAVA_CHECK_DIR/"
	(cd "$JAVA_CHECK_DIR" && mvn_q -Dmaven.repo.local="$M2" package dependency:build-classpath \
		-Dmdep.outputFile="$JAVA_CHECK_DIR/classpath.txt") ||
		die "iceberg java checker: mvn package in $JAVA_CHECK_DIR failed"
	echo "$stamp" >"$JAVA_CHECK_DIR/.stamp"
}

FLOE_BIN="$CACHE/bin/floe"
build_floe() {
	mkdir -p "$CACHE/bin"
	(cd "$REPO" && go build -o "$FLOE_BIN" ./cmd/floe) || die "floe: go build ./cmd/floe failed"
}

# ------------------------------------------------------------------ Kafka

KAFKA_DIR="" KAFKA_PORT="" KAFKA_BOOTSTRAP=""
start_kafka() {
	KAFKA_DIR="$RUN_DIR/kafka"
	if [[ -z $KAFKA_PORT ]]; then
		read -r KAFKA_PORT KAFKA_CTRL_PORT < <(free_ports 2)
		KAFKA_BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
		mkdir -p "$KAFKA_DIR"
		kafka_security_init "$KAFKA_DIR" # SSL and SASL_SSL listeners (kafka_security.sh)
		cat >"$KAFKA_DIR/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CTRL_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CTRL_PORT,SSL://$KAFKA_SSL_BOOTSTRAP,SASL_SSL://$KAFKA_SASL_BOOTSTRAP
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,SSL://$KAFKA_SSL_BOOTSTRAP,SASL_SSL://$KAFKA_SASL_BOOTSTRAP
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL
inter.broker.listener.name=PLAINTEXT
$KAFKA_SECURITY_PROPS
log.dirs=$KAFKA_DIR/data
num.partitions=6
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
EOF
		cat >"$KAFKA_DIR/log4j2.properties" <<EOF
rootLogger.level=INFO
rootLogger.appenderRef.stdout.ref=STDOUT
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=kafka
logger.kafka.level=WARN
logger.apache.name=org.apache.kafka
logger.apache.level=WARN
EOF
		java -cp "$CACHE/kafka/jars/*" kafka.tools.StorageTool format -t "$(java -cp "$CACHE/kafka/jars/*" kafka.tools.StorageTool random-uuid)" \
			-c "$KAFKA_DIR/server.properties" "${KAFKA_FORMAT_ARGS[@]}" >"$RUN_DIR/logs/kafka-format.log" 2>&1 ||
			{ cat "$RUN_DIR/logs/kafka-format.log" >&2; die "kafka: kafka.tools.StorageTool format failed"; }
	fi
	java -Xms256m -Xmx1g -Dlog4j2.configurationFile="$KAFKA_DIR/log4j2.properties" -cp "$CACHE/kafka/jars/*" \
		kafka.Kafka "$KAFKA_DIR/server.properties" >>"$RUN_DIR/logs/kafka.log" 2>&1 &
	track kafka $!
	wait_port kafka "$KAFKA_PORT" 90
	fg_run "$PY" "$INTEROP_DIR/interop.py" kafka-ready --bootstrap "$KAFKA_BOOTSTRAP" --timeout 60 || die "kafka: broker at $KAFKA_BOOTSTRAP does not answer metadata requests"
	alive kafka
	# The secured listeners (kafka_security.sh) open after PLAINTEXT.
	[[ -z $KAFKA_SASL_PORT ]] || wait_port kafka "$KAFKA_SASL_PORT" 30
	log "kafka up at $KAFKA_BOOTSTRAP (SSL $KAFKA_SSL_BOOTSTRAP, SASL_SSL $KAFKA_SASL_BOOTSTRAP)"
}
stop_kafka() { stop_proc kafka; }

# shellcheck source=kafka_security.sh
source "$INTEROP_DIR/kafka_security.sh"

# ------------------------------------------------------------------ MinIO

MINIO_PORT="" S3_ENDPOINT=""
start_minio() {
	[[ -x $MINIO_BIN ]] || die "minio: $MINIO_BIN is not installed"
	if [[ -z $MINIO_PORT ]]; then
		read -r MINIO_PORT MINIO_CONSOLE_PORT < <(free_ports 2)
		S3_ENDPOINT="http://127.0.0.1:$MINIO_PORT"
		mkdir -p "$RUN_DIR/minio"
	fi
	MINIO_ROOT_USER=$S3_ACCESS_KEY MINIO_ROOT_PASSWORD=$S3_SECRET_KEY MINIO_BROWSER=off \
		MINIO_UPDATE=off MINIO_CI_CD=1 \
		"$MINIO_BIN" server --quiet --address "127.0.0.1:$MINIO_PORT" \
		--console-address "127.0.0.1:$MINIO_CONSOLE_PORT" "$RUN_DIR/minio" >>"$RUN_DIR/logs/minio.log" 2>&1 &
	track minio $!
	wait_port minio "$MINIO_PORT" 60
	local i
	for i in $(seq 100); do
		curl -sf "$S3_ENDPOINT/minio/health/ready" >/dev/null && break
		sleep 0.3
	done
	curl -sf "$S3_ENDPOINT/minio/health/ready" >/dev/null || die "minio: $S3_ENDPOINT/minio/health/ready does not answer"
	"$PY" "$INTEROP_DIR/interop.py" create-bucket --endpoint "$S3_ENDPOINT" --access-key "$S3_ACCESS_KEY" \
		--secret-key "$S3_SECRET_KEY" --region "$S3_REGION" --bucket "$S3_BUCKET" >/dev/null ||
		die "minio: cannot create bucket $S3_BUCKET"
	alive minio
	log "minio up at $S3_ENDPOINT (bucket $S3_BUCKET)"
}
stop_minio() { stop_proc minio; }

# ------------------------------------------------------------------ moto (AWS Glue API)

MOTO_PORT="" MOTO_ENDPOINT=""
start_moto() {
	read -r MOTO_PORT < <(free_ports 1)
	MOTO_ENDPOINT="http://127.0.0.1:$MOTO_PORT"
	"$VENV/bin/moto_server" -H 127.0.0.1 -p "$MOTO_PORT" >>"$RUN_DIR/logs/moto.log" 2>&1 &
	track moto $!
	wait_port moto "$MOTO_PORT" 60
	"$PY" "$INTEROP_DIR/interop.py" glue-health --endpoint "$MOTO_ENDPOINT" || die "moto: Glue GetDatabases failed at $MOTO_ENDPOINT"
	log "moto (Glue API) up at $MOTO_ENDPOINT"
}
stop_moto() { stop_proc moto; }

# ------------------------------------------------------------------ schema registry (Apicurio, Kafka storage)

REGISTRY_PORT="" REGISTRY_URL=""
start_registry() {
	[[ -n $KAFKA_BOOTSTRAP ]] || die "schema registry: start_kafka first (Apicurio keeps its data in Kafka)"
	local java
	java=$(registry_java)
	[[ -n $java ]] || die "schema registry: Apicurio Registry $APICURIO_VERSION needs Java 21 or newer and none was found under /usr/lib/jvm (set FLOE_INTEROP_REGISTRY_JAVA)"
	read -r REGISTRY_PORT REGISTRY_MGMT_PORT < <(free_ports 2)
	REGISTRY_URL="http://127.0.0.1:$REGISTRY_PORT/apis/ccompat/v7"
	(cd "$CACHE/apicurio-$APICURIO_VERSION" &&
		APICURIO_STORAGE_KIND=kafkasql APICURIO_KAFKASQL_BOOTSTRAP_SERVERS="$KAFKA_BOOTSTRAP" \
			QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$REGISTRY_PORT" \
			QUARKUS_MANAGEMENT_HOST=127.0.0.1 QUARKUS_MANAGEMENT_PORT="$REGISTRY_MGMT_PORT" \
			QUARKUS_HTTP_ACCESS_LOG_ENABLED=false \
			exec "$java" -Xms128m -Xmx512m -XX:TieredStopAtLevel=1 -jar quarkus-run.jar) >>"$RUN_DIR/logs/schema-registry.log" 2>&1 &
	track schema-registry $!
	wait_port schema-registry "$REGISTRY_PORT" 180
	fg_run "$PY" "$INTEROP_DIR/interop.py" registry-health --url "$REGISTRY_URL" --timeout 120 ||
		{ tail -n 30 "$RUN_DIR/logs/schema-registry.log" >&2; die "schema registry: Apicurio at $REGISTRY_URL failed its health check"; }
	log "schema registry (Apicurio $APICURIO_VERSION, kafkasql storage) up at $REGISTRY_URL"
}
stop_registry() { stop_proc schema-registry; }

# ------------------------------------------------------------------ Floe

# floe_config NAME TOPIC...: writes $RUN_DIR/NAME/floe.yaml mapping each topic
# to table interop.TOPIC, with the warehouse at s3://$S3_BUCKET/NAME on MinIO.
floe_config() {
	local name=$1
	shift
	local dir="$RUN_DIR/$name" raft admin rpc t
	mkdir -p "$dir"
	read -r raft admin rpc < <(free_ports 3)
	{
		cat <<EOF
node:
  id: $name
  data_dir: $dir/data
  raft_addr: 127.0.0.1:$raft
  admin_addr: 127.0.0.1:$admin
  rpc_addr: 127.0.0.1:$rpc
kafka:
  bootstrap_servers: [$KAFKA_BOOTSTRAP]
warehouse:
  location: s3://$S3_BUCKET/$name
  s3:
    endpoint: $S3_ENDPOINT
    region: $S3_REGION
    access_key_id: $S3_ACCESS_KEY
    secret_access_key: $S3_SECRET_KEY
commit_interval: ${FLOE_INTEROP_COMMIT_INTERVAL:-2s}
tables:
EOF
		for t in "$@"; do
			echo "  - {topic: $t, namespace: interop, name: $t, format: json}"
		done
	} >"$dir/floe.yaml"
	echo "$admin" >"$dir/admin-port"
}

floe_admin() { echo "127.0.0.1:$(cat "$RUN_DIR/$1/admin-port")"; }

# start_floe NAME: runs `floe serve` with $RUN_DIR/NAME/floe.yaml (same data
# dir on every start) and waits for /readyz.
start_floe() {
	local name=$1 admin
	admin=$(floe_admin "$name")
	"$FLOE_BIN" serve --config "$RUN_DIR/$name/floe.yaml" >>"$RUN_DIR/logs/floe-$name.log" 2>&1 &
	track "floe-$name" $!
	local i
	for i in $(seq 150); do
		curl -sf "http://$admin/readyz" >/dev/null && break
		kill -0 "${PIDS[floe-$name]}" 2>/dev/null || break
		sleep 0.2
	done
	curl -sf "http://$admin/readyz" >/dev/null || {
		tail -n 30 "$RUN_DIR/logs/floe-$name.log" >&2
		die "floe $name: not ready at http://$admin/readyz within 30s"
	}
	log "floe $name up (admin $admin, pid ${PIDS[floe-$name]})"
}
stop_floe() { stop_proc "floe-$1"; }
kill_floe() {
	log "SIGKILL floe $1 (pid ${PIDS[floe-$1]})"
	stop_proc "floe-$1" KILL
}

floe_status() { "$FLOE_BIN" status --admin-addr "$(floe_admin "$1")" -o json; }

# ------------------------------------------------------------------ producing and expecting

create_topics() { "$PY" "$INTEROP_DIR/interop.py" create-topics --bootstrap "$KAFKA_BOOTSTRAP" --partitions "$@"; }

# produce COUNT_PER_TOPIC RATE START_ID TOPIC...: produces (foreground).
# RATE is records/s over all topics (0: as fast as possible).
PRODUCE_ARGS=()
produce_args() {
	local count=$1 rate=$2 start=$3
	shift 3
	PRODUCE_ARGS=("$INTEROP_DIR/interop.py" produce --bootstrap "$KAFKA_BOOTSTRAP" --count "$count" --rate "$rate"
		--start-id "$start" --report-dir "$RUN_DIR/produced" "$@")
}
produce() {
	produce_args "$@"
	fg_run "$PY" "${PRODUCE_ARGS[@]}"
}

# produce_bg ...: as produce, in the background; sets PRODUCER_PID. wait_producer waits and checks it.
PRODUCER_PID="" PRODUCER_LOG=""
produce_bg() {
	produce_args "$@"
	PRODUCER_LOG=$(mktemp "$RUN_DIR/logs/producer.XXXX.log")
	"$PY" "${PRODUCE_ARGS[@]}" >"$PRODUCER_LOG" 2>&1 &
	PRODUCER_PID=$!
	track producer "$PRODUCER_PID"
}
wait_producer() {
	local rc=0
	wait "$PRODUCER_PID" || rc=$?
	unset "PIDS[producer]"
	grep -v '^%' "$PRODUCER_LOG" | tail -n 5 # librdkafka's own lines (%N|...) stay in the log
	((rc == 0)) || die "producer failed (exit $rc, log $PRODUCER_LOG)"
}

# expect_tables TOPIC...: writes $RUN_DIR/expect/TOPIC.json for each topic from
# the producer reports and Kafka's watermarks.
expect_tables() {
	local t
	for t in "$@"; do
		"$PY" "$INTEROP_DIR/interop.py" expect --bootstrap "$KAFKA_BOOTSTRAP" --report-dir "$RUN_DIR/produced" \
			--topic "$t" --table "interop.$t" --out "$RUN_DIR/expect/$t.json" || die "building the expectation of topic $t"
	done
}

# wait_caught_up NAME TIMEOUT TOPIC...: polls Floe's status until every table
# committed every produced offset and is RUNNING.
wait_caught_up() {
	local name=$1 timeout=$2
	shift 2
	local files=() t
	for t in "$@"; do files+=("$RUN_DIR/expect/$t.json"); done
	fg_run "$PY" "$INTEROP_DIR/interop.py" wait-caught-up --admin "$(floe_admin "$name")" --timeout "$timeout" "${files[@]}" || {
		floe_status "$name" | head -c 6000 >&2 || true
		tail -n 20 "$RUN_DIR/logs/floe-$name.log" >&2
		die "floe $name did not catch up"
	}
}

# ------------------------------------------------------------------ readers

# Both readers take the same arguments:
#   --metadata-location URL --expect FILE [--mode table|metadata-dir] + S3 options
reader_s3_args() {
	[[ -n $S3_ENDPOINT ]] || return 0
	echo --s3-endpoint "$S3_ENDPOINT" --s3-access-key "$S3_ACCESS_KEY" --s3-secret-key "$S3_SECRET_KEY" --s3-region "$S3_REGION"
}
run_pyiceberg_check() {
	# shellcheck disable=SC2046
	"$PY" "$INTEROP_DIR/pyiceberg_check.py" $(reader_s3_args) "$@"
}
run_java_check() {
	# shellcheck disable=SC2046
	java -Xmx1g -cp "$JAVA_CHECK_DIR/target/classes:$(cat "$JAVA_CHECK_DIR/classpath.txt")" io.floe.interop.Check $(reader_s3_args) "$@"
}

# verify_tables NAME TOPIC...: both readers scan every table of Floe node NAME
# at its current metadata location and check it against the expectation. The
# location is recorded in $RUN_DIR/tables.tsv for later metadata checks.
verify_tables() {
	local name=$1
	shift
	local t loc tables=() failed=0
	for t in "$@"; do tables+=("interop.$t"); done
	local locs
	locs=$("$PY" "$INTEROP_DIR/interop.py" metadata-locations --admin "$(floe_admin "$name")" "${tables[@]}") ||
		die "floe $name: no metadata locations"
	for t in "$@"; do
		loc=$(awk -F'\t' -v t="interop.$t" '$1==t{print $2}' <<<"$locs")
		printf '%s\t%s\t%s\n' "$name" "$loc" "$RUN_DIR/expect/$t.json" >>"$RUN_DIR/tables.tsv"
		run_pyiceberg_check --metadata-location "$loc" --expect "$RUN_DIR/expect/$t.json" || failed=1
		run_java_check --metadata-location "$loc" --expect "$RUN_DIR/expect/$t.json" || failed=1
	done
	((failed == 0)) || die "floe $name: a reader rejected a table (see above)"
}

# verify_metadata_dirs: both readers parse every metadata.json beside each
# table recorded by verify_tables and check the floe.offsets history.
verify_metadata_dirs() {
	local node loc exp failed=0
	[[ -s $RUN_DIR/tables.tsv ]] || die "no tables recorded: run a scenario that calls verify_tables first"
	while IFS=$'\t' read -r node loc exp; do
		run_java_check --mode metadata-dir --metadata-location "$loc" --expect "$exp" || failed=1
		run_pyiceberg_check --mode metadata-dir --metadata-location "$loc" --expect "$exp" || failed=1
	done <"$RUN_DIR/tables.tsv"
	((failed == 0)) || die "a reader rejected table metadata (see above)"
}

# selftest_readers: both readers must accept a correct file:// table and reject
# each broken one that reader_selftest.py makes (duplicates, a gap, a wrong
# key, stale or missing floe.offsets).
selftest_readers() {
	local dir="$RUN_DIR/reader-selftest" cases name mode want loc exp text out reader rc bad=0 readers
	cases=$("$PY" "$INTEROP_DIR/reader_selftest.py" --dir "$dir") || die "reader self-test: making the tables failed"
	while IFS=$'\t' read -r name mode want loc exp text; do
		readers=(run_pyiceberg_check run_java_check)
		[[ $mode == time-travel || $mode == pruning ]] && readers=(run_pyiceberg_check) # PyIceberg-only modes
		for reader in "${readers[@]}"; do
			rc=0
			out=$("$reader" --mode "$mode" --metadata-location "$loc" --expect "$exp" 2>&1) || rc=$?
			if [[ $want == ok && $rc -ne 0 ]] || [[ $want == fail && $rc -ne 1 ]] || [[ $out != *"$text"* ]]; then
				printf '%s\n' "$out" | head -n 20 >&2
				log "reader self-test: ${reader#run_} $mode on '$name' exited $rc, wanted $want with output containing: $text"
				bad=1
			fi
		done
	done <<<"$cases"
	((bad == 0)) || die "reader self-test: a reader accepted a broken table or rejected a good one"
	log "reader self-test: both readers accept the good tables and reject $(grep -c $'\tfail\t' <<<"$cases") broken cases"
}

# Delta Lake readers: install_delta_spark, verify_delta (delta.sh).
# shellcheck source=delta.sh
source "$INTEROP_DIR/delta.sh"
