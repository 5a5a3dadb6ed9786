# shellcheck shell=bash
# Interop scenario 10: the admin API under a fuzzer. Sourced by run.sh.
#
# One Floe node with bearer tokens ingests a topic from real Kafka into
# MinIO. Its OpenAPI document (GET /openapi.json, generated from the protos)
# must validate as Swagger 2.0 (openapi-spec-validator), and schemathesis
# fuzzes every HTTP operation it describes with an admin token: no answer may
# be a 5xx and the node must stay up and ready. Then the table is read back
# by PyIceberg and Iceberg Java: whatever the fuzzer did (it may create
# mappings, pause, resume or drain), the records produced before it are in
# the table exactly once unless a rewind replayed them, which the fuzzer
# cannot aim at a table it does not know.

SCENARIO_TITLES[10]="admin API: OpenAPI validates, schemathesis fuzzes every operation (${FLOE_S10_EXAMPLES:-100} examples each) without a 5xx"
# First: later scenarios leave topics behind that random API mappings would
# start ingesting while the fuzzer runs.
SCENARIO_ORDER=(10 "${SCENARIO_ORDER[@]}")

S10_TOKEN=interop-admin-token-0123456789

scenario_10() {
	local n=s10 t=s10_events admin base
	create_topics 2 $t
	floe_config $n $t
	cat >>"$RUN_DIR/$n/floe.yaml" <<YAML
auth:
  tokens: "$S10_TOKEN:admin"
YAML
	start_floe $n
	admin=$(floe_admin $n)
	base="http://$admin"
	export FLOE_TOKEN=$S10_TOKEN # the floe CLI and interop.py status calls
	produce 5000 0 0 $t
	expect_tables $t
	wait_caught_up $n 300 $t

	curl -sf "$base/v1/mappings" >/dev/null && die "the admin API answered without a token"
	curl -sf "$base/openapi.json" -o "$RUN_DIR/$n/openapi.json" || die "GET /openapi.json failed"
	"$PY" -m openapi_spec_validator "$RUN_DIR/$n/openapi.json" || die "the OpenAPI document does not validate"
	log "openapi.json validates ($(wc -c <"$RUN_DIR/$n/openapi.json") bytes)"

	# The fuzzer: every operation, checks limited to what the issue asks
	# (no 5xx); its report goes to the run directory.
	local st="$VENV/bin/schemathesis"
	fg_run "$st" run "$RUN_DIR/$n/openapi.json" --url "$base" \
		-H "Authorization: Bearer $S10_TOKEN" --checks not_a_server_error \
		--max-examples "${FLOE_S10_EXAMPLES:-100}" --request-timeout 30 \
		--generation-deterministic --suppress-health-check all \
		>"$RUN_DIR/logs/schemathesis.log" 2>&1 || {
		tail -n 60 "$RUN_DIR/logs/schemathesis.log" >&2
		die "schemathesis found a 5xx or failed (see $RUN_DIR/logs/schemathesis.log)"
	}
	log "schemathesis: $(grep -E 'passed|failed|errors?' "$RUN_DIR/logs/schemathesis.log" | tail -n 3 | tr '\n' ' ')"
	alive "floe-$n"
	curl -sf "$base/readyz" >/dev/null || die "floe $n not ready after the fuzzer"
	"$FLOE_BIN" ctl health --addr "$admin" >/dev/null || die "floe ctl health failed after the fuzzer"

	# The fuzzer may have paused or drained: resume, undrain is not an API
	# operation, so read the table as it stands.
	verify_tables $n $t
	unset FLOE_TOKEN
	stop_floe $n
}
