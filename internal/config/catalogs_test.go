package config

import (
	"strings"
	"testing"
)

func TestCatalogsConfig(t *testing.T) {
	cfg, err := Load(write(t, validYAML), []string{
		"FLOE_AUTH_TOKENS=abcdefghijklmnopq:admin",
		"FLOE_CATALOGS_GLUE_ENABLED=true",
		"FLOE_CATALOGS_GLUE_ENDPOINT=http://127.0.0.1:5000",
		`FLOE_CATALOGS_REST=[{"uri": "https://polaris.example/api/catalog", "client_id": "a", "client_secret": "b"}]`,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Catalogs
	if !c.Server.Enabled || c.Server.Consistency != "local" || !c.Glue.Enabled || !c.Glue.SkipArchive || c.SyncInterval.D() == 0 {
		t.Fatalf("defaults and env: %+v", c)
	}
	if len(c.REST) != 1 || c.REST[0].Name != "rest-0" || cfg.Auth.Tokens == "" {
		t.Fatalf("rest catalogs: %+v", c.REST)
	}
	// Glue's Iceberg REST endpoint, signed: the region comes from the host.
	signed, err := Load(write(t, validYAML), []string{"FLOE_AUTH_TOKENS=abcdefghijklmnopq:admin",
		`FLOE_CATALOGS_REST=[{"uri": "https://glue.eu-west-1.amazonaws.com/iceberg", "warehouse": "123456789012", "sigv4": {"enabled": true, "signing_name": "glue"}}]`})
	if err != nil {
		t.Fatal(err)
	}
	if sv := signed.Catalogs.REST[0].SigV4; !sv.Enabled || sv.SigningName != "glue" || sv.Region != "eu-west-1" {
		t.Fatalf("sigv4: %+v", sv)
	}
	for _, tc := range []struct {
		field string
		env   []string
	}{
		{"catalogs.server.addr", []string{"FLOE_CATALOGS_SERVER_ADDR=nope"}},
		{"catalogs.server.tls.cert_file", []string{"FLOE_CATALOGS_SERVER_TLS_CERT_FILE=c.pem", "FLOE_CATALOGS_SERVER_TLS_KEY_FILE=k.pem"}},
		{"catalogs.server.tls.key_file", []string{"FLOE_CATALOGS_SERVER_ADDR=:7423", "FLOE_CATALOGS_SERVER_TLS_CERT_FILE=c.pem"}},
		{"catalogs.server.consistency", []string{"FLOE_CATALOGS_SERVER_CONSISTENCY=eventual"}},
		{"catalogs.sync_interval", []string{"FLOE_CATALOGS_SYNC_INTERVAL=1ms"}},
		{"catalogs.sync_timeout", []string{"FLOE_CATALOGS_SYNC_TIMEOUT=10ms"}},
		{"catalogs.glue.endpoint", []string{"FLOE_CATALOGS_GLUE_ENABLED=true", "FLOE_CATALOGS_GLUE_ENDPOINT=localhost"}},
		{"catalogs.glue.database_prefix", []string{"FLOE_CATALOGS_GLUE_DATABASE_PREFIX=" + strings.Repeat("p", 255)}},
		{"catalogs.glue.database_prefix", []string{"FLOE_CATALOGS_GLUE_DATABASE_PREFIX=floe.prod"}},
		{"catalogs.rest[0].uri", []string{`FLOE_CATALOGS_REST=[{"uri": "ftp://x"}]`}},
		{"catalogs.rest[0].name", []string{`FLOE_CATALOGS_REST=[{"name": "Glue!", "uri": "http://x"}]`}},
		{"catalogs.rest[1].name", []string{`FLOE_CATALOGS_REST=[{"name": "a", "uri": "http://x"}, {"name": "a", "uri": "http://y"}]`}},
		{"catalogs.rest[0].client_id", []string{`FLOE_CATALOGS_REST=[{"uri": "http://x", "token": "t", "client_id": "a", "client_secret": "b"}]`}},
		{"catalogs.rest[0].client_secret", []string{`FLOE_CATALOGS_REST=[{"uri": "http://x", "client_id": "a"}]`}},
		{"catalogs.rest[0].sigv4.signing_name", []string{`FLOE_CATALOGS_REST=[{"uri": "https://s3tables.us-east-1.amazonaws.com/iceberg", "sigv4": {"enabled": true, "signing_name": "s3tables"}}]`}},
		{"catalogs.rest[0].sigv4.signing_name", []string{`FLOE_CATALOGS_REST=[{"uri": "https://glue.us-east-1.amazonaws.com/iceberg", "sigv4": {"enabled": true}}]`}},
		{"catalogs.rest[0].sigv4.region", []string{`FLOE_CATALOGS_REST=[{"uri": "https://catalog.example/iceberg", "sigv4": {"enabled": true, "signing_name": "glue"}}]`}},
		{"catalogs.rest[0].sigv4.enabled", []string{`FLOE_CATALOGS_REST=[{"uri": "https://glue.us-east-1.amazonaws.com/iceberg", "token": "t", "sigv4": {"enabled": true, "signing_name": "glue"}}]`}},
	} {
		t.Run(tc.field, func(t *testing.T) {
			_, err := Load(write(t, validYAML), tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("want an error naming %s, got %v", tc.field, err)
			}
		})
	}
}
