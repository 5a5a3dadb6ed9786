# shellcheck shell=bash
# The interop broker's secured listeners. Sourced by lib.sh; start_kafka
# calls kafka_security_init once, when it first writes the broker's config.
#
# Besides its PLAINTEXT listener (the producers, the registry and every
# other scenario), the single KRaft broker listens on:
#   SSL       TLS only (server certificate, no client certificate);
#   SASL_SSL  TLS plus SASL, PLAIN and SCRAM-SHA-512 enabled.
# The certificates are made at run time with openssl (an EC P-256 CA and a
# broker certificate for IP 127.0.0.1 and localhost) and given to Kafka as a
# PEM keystore (ssl.keystore.type=PEM, KIP-651): no keytool, no JKS. The
# PLAIN user lives in the listener's JAAS config; the SCRAM user is written
# into the metadata log when the storage is formatted (--add-scram), so the
# broker knows it before its first start, without kafka-configs.

KAFKA_SSL_PORT="" KAFKA_SASL_PORT=""
KAFKA_SSL_BOOTSTRAP="" KAFKA_SASL_BOOTSTRAP=""
KAFKA_CA_FILE=""
KAFKA_PLAIN_USER=floe-plain KAFKA_PLAIN_PASSWORD=interop-plain-secret-1
KAFKA_SCRAM_USER=floe-scram KAFKA_SCRAM_PASSWORD=interop-scram-secret-1

# kafka_make_certs DIR: a CA (DIR/ca.pem) and the broker's PEM keystore
# (DIR/broker-keystore.pem: PKCS#8 key, then certificate, then the CA).
kafka_make_certs() {
	local d=$1
	mkdir -p "$d"
	(
		set -e
		cd "$d"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
			-days 7 -subj "/CN=floe-interop-ca" \
			-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout broker.key -out broker.csr \
			-subj "/CN=127.0.0.1"
		printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "extendedKeyUsage=serverAuth" \
			"keyUsage=critical,digitalSignature" >broker.ext
		openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 7 \
			-extfile broker.ext -out broker.crt
		cat broker.key broker.crt ca.pem >broker-keystore.pem
	) >"$RUN_DIR/logs/kafka-certs.log" 2>&1 || {
		cat "$RUN_DIR/logs/kafka-certs.log" >&2
		die "kafka: making the TLS certificates with openssl failed"
	}
	grep -q 'BEGIN PRIVATE KEY' "$d/broker.key" || die "kafka: openssl did not write a PKCS#8 key (Kafka's PEM keystore needs one)"
}

# kafka_security_init DIR: picks the two ports, makes the certificates and
# sets KAFKA_SECURITY_PROPS (server.properties lines) and
# KAFKA_FORMAT_ARGS (the SCRAM user for StorageTool format).
kafka_security_init() {
	local d=$1
	read -r KAFKA_SSL_PORT KAFKA_SASL_PORT < <(free_ports 2)
	KAFKA_SSL_BOOTSTRAP="127.0.0.1:$KAFKA_SSL_PORT"
	KAFKA_SASL_BOOTSTRAP="127.0.0.1:$KAFKA_SASL_PORT"
	kafka_make_certs "$d/tls"
	KAFKA_CA_FILE="$d/tls/ca.pem"
	KAFKA_SECURITY_PROPS="ssl.keystore.type=PEM
ssl.keystore.location=$d/tls/broker-keystore.pem
ssl.client.auth=none
ssl.enabled.protocols=TLSv1.2,TLSv1.3
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$KAFKA_PLAIN_USER=\"$KAFKA_PLAIN_PASSWORD\";
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
	KAFKA_FORMAT_ARGS=(--add-scram "SCRAM-SHA-512=[name=$KAFKA_SCRAM_USER,password=$KAFKA_SCRAM_PASSWORD]")
}
