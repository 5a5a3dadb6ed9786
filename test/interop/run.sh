#!/usr/bin/env bash
# Floe interop suite: real Kafka, real S3 (MinIO), moto (Glue API), a schema
# registry, and independent Iceberg readers (PyIceberg, Iceberg Java).
#
#   bash test/interop/run.sh            # every scenario
#   bash test/interop/run.sh 1 5        # only scenarios 1 and 5
#
# Environment: FLOE_INTEROP_CACHE (install cache, default <repo>/.cache/interop),
# FLOE_INTEROP_WORK (run directory, default a new /tmp/floe-interop.*),
# FLOE_INTEROP_KEEP=1 (keep the run directory after a passing run),
# FLOE_INTEROP_SCENARIOS ("1 2 3", same as arguments). See README.md.
set -euo pipefail

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scenarios.sh
source "$INTEROP_DIR/scenarios.sh"
# shellcheck source=scenario9.sh
source "$INTEROP_DIR/scenario9.sh"
# shellcheck source=scenario10.sh
source "$INTEROP_DIR/scenario10.sh"
# shellcheck source=scenario11.sh
source "$INTEROP_DIR/scenario11.sh"
# shellcheck source=scenario12.sh
source "$INTEROP_DIR/scenario12.sh"
# shellcheck source=scenario13.sh
source "$INTEROP_DIR/scenario13.sh"
# shellcheck source=scenario14.sh
source "$INTEROP_DIR/scenario14.sh"
# shellcheck source=scenario15.sh
source "$INTEROP_DIR/scenario15.sh"
# shellcheck source=scenario16.sh
source "$INTEROP_DIR/scenario16.sh"

RUN_START=$(date +%s)
RUN_DIR=""

on_exit() {
	local rc=$?
	set +e
	((rc == 0)) || phase_failed
	stop_minio_install
	log "stopping services"
	local n
	for n in "${!PIDS[@]}"; do [[ $n == floe-* || $n == producer ]] && stop_proc "$n"; done
	stop_registry
	stop_proc rest-reference
	stop_moto
	stop_kafka
	stop_minio
	stop_all
	print_timings
	log "total $(($(date +%s) - RUN_START))s"
	if ((rc == 0)); then
		if [[ -n $RUN_DIR && -z ${FLOE_INTEROP_KEEP:-} && -z ${FLOE_INTEROP_WORK:-} ]]; then
			rm -rf "$RUN_DIR"
		fi
		log "PASSED"
	else
		[[ -n $RUN_DIR ]] && log "logs and data kept in $RUN_DIR"
		log "FAILED (exit $rc)"
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

read -r -a SCENARIOS <<<"${*:-${FLOE_INTEROP_SCENARIOS:-${SCENARIO_ORDER[*]}}}"
for s in "${SCENARIOS[@]}"; do
	declare -F "scenario_$s" >/dev/null || die "unknown scenario $s (known: ${SCENARIO_ORDER[*]})"
done

for tool in go java mvn python3 curl; do
	command -v "$tool" >/dev/null || die "$tool is not on PATH"
done

init_run_dir

phase "install (cache $CACHE)"
install_minio background # the slow one (go install) builds while the rest installs
install_python
install_kafka
install_registry
install_java_check
install_delta_spark
build_floe
wait_minio_install

phase "reader self-test (file:// tables, no services)"
selftest_readers

phase "start services"
start_minio
start_kafka
start_moto
start_registry

for s in "${SCENARIOS[@]}"; do
	phase "scenario $s: ${SCENARIO_TITLES[$s]}"
	"scenario_$s"
done
phase_end
log "${#SCENARIOS[@]} scenario(s) passed: ${SCENARIOS[*]}"
