# shellcheck shell=bash
# Interop scenario 13: the status console (/ui) in a real browser. Sourced by
# run.sh.
#
# One Floe node materializes a topic on MinIO. While MinIO is stopped the
# table goes DEGRADED; headless Chromium (Debian's `chromium` package) loads
# the overview, the page must show DEGRADED with the numbers GET /v1/status
# answers (console_check.py), and its screenshot is kept. After MinIO is back
# and the table caught up, the same check (RUNNING) and a second screenshot.
# Screenshots go to $FLOE_INTEROP_ARTIFACTS/s13 (default
# /tmp/floe-interop-artifacts/<run>/s13), which outlives the run directory.

SCENARIO_TITLES[13]="status console in headless Chromium: overview while DEGRADED and after recovery, numbers equal to /v1/status; every page and action"
SCENARIO_ORDER+=(13)

CHROMIUM=${FLOE_INTEROP_CHROMIUM:-chromium}

# ensure_chromium: Chromium from Debian's packages, installed when missing
# and this is root (as on CI); nothing else can fetch a browser here.
ensure_chromium() {
	command -v "$CHROMIUM" >/dev/null && return 0
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		log "installing chromium (Debian package)"
		apt-get install -y -q chromium >"$RUN_DIR/logs/apt-chromium.log" 2>&1 ||
			{ apt-get update -q >>"$RUN_DIR/logs/apt-chromium.log" 2>&1 && apt-get install -y -q chromium >>"$RUN_DIR/logs/apt-chromium.log" 2>&1; } ||
			die "chromium: apt-get install chromium failed (see $RUN_DIR/logs/apt-chromium.log)"
	fi
	command -v "$CHROMIUM" >/dev/null || die "chromium is not on PATH: apt-get install chromium (as root), or set FLOE_INTEROP_CHROMIUM"
}

# console_check NAME STATE SHOT TOPIC...: the overview of node NAME in
# Chromium shows every topic's table in STATE with /v1/status's numbers.
console_check() {
	local name=$1 state=$2 shot=$3
	shift 3
	fg_run "$PY" "$INTEROP_DIR/console_check.py" --admin "$(floe_admin "$name")" --chromium "$CHROMIUM" \
		--shot "$shot" --state "$state" "${@/#/interop.}"
}

scenario_13() {
	local n=s13 topics=(s13_events) rc=0 t0 shots
	ensure_chromium
	shots=${FLOE_INTEROP_ARTIFACTS:-/tmp/floe-interop-artifacts/$(basename "$RUN_DIR")}/s13
	mkdir -p "$shots"
	create_topics 4 "${topics[@]}"
	floe_config $n "${topics[@]}"
	start_floe $n
	produce_bg "$FAULT_RECORDS" "$FAULT_RATE" 0 "${topics[@]}"
	wait_committed $n 1 60
	local rx="(?i)\bs3\b|storage|127\.0\.0\.1:$MINIO_PORT"
	before_fault $n "$rx" "${topics[@]}"
	log "stopping MinIO for ${OUTAGE_SECS}s"
	t0=$(date +%s)
	stop_minio
	fg_run "$PY" "$INTEROP_DIR/interop.py" watch-state --admin "$(floe_admin $n)" --all \
		--state DEGRADED --reason-regex "$rx" --duration "$OUTAGE_SECS" "${topics[@]/#/interop.}" || rc=$?
	if ((rc == 0)); then
		console_check $n DEGRADED "$shots/overview-degraded.png" "${topics[@]}" || rc=$?
	fi
	sleep_until $((t0 + OUTAGE_SECS))
	start_minio
	((rc == 0)) || die "floe $n: the console did not show DEGRADED with /v1/status's numbers while MinIO was down"
	wait_producer
	expect_tables "${topics[@]}"
	wait_caught_up $n 300 "${topics[@]}"
	console_check $n RUNNING "$shots/overview-recovered.png" "${topics[@]}" ||
		die "floe $n: the console after recovery does not match /v1/status"
	# Every page in Chromium and every action over HTTP (console_pages.py).
	fg_run "$PY" "$INTEROP_DIR/console_pages.py" --admin "$(floe_admin $n)" --chromium "$CHROMIUM" \
		--shots "$shots" "${topics[@]/#/interop.}" || die "floe $n: a console page or action failed"
	log "console screenshots kept in $shots"
	verify_tables $n "${topics[@]}"
	stop_floe $n
}
