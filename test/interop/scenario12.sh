# shellcheck shell=bash
# Interop scenario 12: Kafka security on a real broker. Sourced by run.sh.
#
# The broker's SSL and SASL_SSL listeners (kafka_security.sh: openssl
# certificates in a PEM keystore, a PLAIN user in the JAAS config, a SCRAM
# user added when the storage was formatted). Three Floe nodes consume one
# topic each through a secured listener only (their bootstrap server is that
# listener, and the broker advertises the same listener, so every connection
# of both of Floe's Kafka clients goes through it):
#   s12tls    SSL, the CA from kafka.tls.ca_file;
#   s12plain  SASL_SSL PLAIN, the password from kafka.sasl.password_file;
#   s12scram  SASL_SSL SCRAM-SHA-512.
# Each table is read by PyIceberg and Iceberg Java: every produced
# (partition, offset) exactly once. Two more nodes must fail, visibly:
#   s12badpw     SCRAM-SHA-512 with a wrong password: the table DEGRADED with
#                a reason naming the authentication failure in `floe status`
#                and /v1/status, the node alive and retrying (new attempts
#                logged), nothing committed, the password in no output;
#   s12untrusted TLS without the CA: DEGRADED naming the certificate.
# The producer writes on the PLAINTEXT listener, as in every scenario.

SCENARIO_TITLES[12]="Kafka security: Floe through SSL, SASL_SSL PLAIN and SCRAM-SHA-512; a wrong SCRAM password or an untrusted CA is reported, nothing committed"
SCENARIO_ORDER+=(12)

S12_RECORDS=${FLOE_S12_RECORDS:-3000}  # per topic
S12_WRONG_PASSWORD=s12-wrong-password-marker-5521

# s12_kafka NAME BOOTSTRAP YAML: rewrites the kafka section floe_config
# wrote for node NAME: BOOTSTRAP instead of the PLAINTEXT listener, and the
# lines of YAML (tls, sasl) under it.
s12_kafka() {
	local f="$RUN_DIR/$1/floe.yaml"
	S12_BOOT=$2 S12_EXTRA=$3 awk '/^  bootstrap_servers:/ { print "  bootstrap_servers: [" ENVIRON["S12_BOOT"] "]"; print ENVIRON["S12_EXTRA"]; next } { print }' \
		"$f" >"$f.new" && mv "$f.new" "$f"
	grep -q "bootstrap_servers: \[$2\]" "$f" || die "scenario 12: could not point $f at $2"
}

# s12_auth_attempts NAME: how many failed topic listings node NAME logged.
s12_auth_attempts() { grep -c 'discovering topics.*SASL Authentication' "$RUN_DIR/logs/floe-$1.log" || true; }

# s12_wait_retry NAME: waits (up to 90 s: the retry backoff caps at 30 s)
# for two more failed attempts than now, so the node keeps trying.
s12_wait_retry() {
	local n=$1 before now deadline=$((SECONDS + 90))
	before=$(s12_auth_attempts "$n")
	while ((SECONDS < deadline)); do
		alive "floe-$n"
		now=$(s12_auth_attempts "$n")
		if ((now >= before + 2)); then
			log "floe $n retried: $before -> $now failed authentications logged"
			return 0
		fi
		sleep 1
	done
	die "floe $n stopped retrying: $before -> $(s12_auth_attempts "$n") failed attempts in 90s"
}

# s12_watch NAME TOPIC REGEX [--floe-bin BIN]: the table DEGRADED with a
# reason matching REGEX within 60 s, read through /v1/status, or through
# `floe status -o json` with --floe-bin.
s12_watch() {
	local n=$1 t=$2 rx=$3
	shift 3
	fg_run "$PY" "$INTEROP_DIR/interop.py" watch-state "$@" --admin "$(floe_admin "$n")" \
		--state DEGRADED --reason-regex "$rx" --duration 60 "interop.$t" ||
		die "floe $n: interop.$t did not report DEGRADED matching $rx"
}

scenario_12() {
	local good=(s12tls s12plain s12scram) n pwfile="$RUN_DIR/s12-plain-password" badpw="$RUN_DIR/s12-bad-password"
	create_topics 3 s12_tls s12_plain s12_scram s12_badpw s12_untrusted
	printf '%s\n' "$KAFKA_PLAIN_PASSWORD" >"$pwfile"
	printf '%s\n' "$S12_WRONG_PASSWORD" >"$badpw"
	chmod 600 "$pwfile" "$badpw"
	for n in "${good[@]}" s12badpw s12untrusted; do floe_config $n "s12_${n#s12}"; done
	s12_kafka s12tls "$KAFKA_SSL_BOOTSTRAP" "  tls: {enabled: true, ca_file: $KAFKA_CA_FILE}"
	s12_kafka s12plain "$KAFKA_SASL_BOOTSTRAP" "  tls: {enabled: true, ca_file: $KAFKA_CA_FILE}
  sasl: {mechanism: PLAIN, username: $KAFKA_PLAIN_USER, password_file: $pwfile}"
	s12_kafka s12scram "$KAFKA_SASL_BOOTSTRAP" "  tls: {enabled: true, ca_file: $KAFKA_CA_FILE}
  sasl: {mechanism: SCRAM-SHA-512, username: $KAFKA_SCRAM_USER, password: $KAFKA_SCRAM_PASSWORD}"
	s12_kafka s12badpw "$KAFKA_SASL_BOOTSTRAP" "  tls: {enabled: true, ca_file: $KAFKA_CA_FILE}
  sasl: {mechanism: SCRAM-SHA-512, username: $KAFKA_SCRAM_USER, password_file: $badpw}"
	s12_kafka s12untrusted "$KAFKA_SSL_BOOTSTRAP" "  tls: {enabled: true}"
	for n in "${good[@]}" s12badpw s12untrusted; do start_floe $n; done

	produce "$S12_RECORDS" 0 0 s12_tls s12_plain s12_scram s12_badpw s12_untrusted
	expect_tables s12_tls s12_plain s12_scram
	for n in "${good[@]}"; do
		wait_caught_up $n 300 "s12_${n#s12}"
		verify_tables $n "s12_${n#s12}"
		log "floe $n: every (partition, offset) of s12_${n#s12} once through $(grep -oE 'mechanism: [A-Z0-9-]+' "$RUN_DIR/$n/floe.yaml" || echo 'TLS only')"
	done

	# The wrong password: reported, retried, nothing committed, never printed.
	local rx='(?i)SASL Authentication failed.*(invalid credentials|SCRAM-SHA-512)'
	s12_watch s12badpw s12_badpw "$rx" --floe-bin "$FLOE_BIN"
	s12_watch s12badpw s12_badpw "$rx"
	s12_wait_retry s12badpw
	local rows
	rows=$("$PY" "$INTEROP_DIR/interop.py" committed-rows --admin "$(floe_admin s12badpw)") || die "floe s12badpw: no status"
	[[ $rows == 0 ]] || die "floe s12badpw committed $rows rows with a wrong password"
	if floe_status s12badpw | grep -qF "$S12_WRONG_PASSWORD" || grep -qF "$S12_WRONG_PASSWORD" "$RUN_DIR/logs/floe-s12badpw.log"; then
		die "floe s12badpw printed the SASL password in its status or log"
	fi
	log "floe s12badpw: DEGRADED naming the authentication failure, retrying, 0 rows committed, password in no output"

	s12_watch s12untrusted s12_untrusted '(?i)certificate|x509|tls'
	rows=$("$PY" "$INTEROP_DIR/interop.py" committed-rows --admin "$(floe_admin s12untrusted)") || die "floe s12untrusted: no status"
	[[ $rows == 0 ]] || die "floe s12untrusted committed $rows rows from a broker it cannot verify"
	alive floe-s12untrusted
	for n in "${good[@]}" s12badpw s12untrusted; do stop_floe $n; done
}
