package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSecretFiles: every secret has a *_file form that fills it (trailing
// newline dropped); both forms, an unreadable file and an empty file are
// errors naming the fields and the path, never the content.
func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	secretFile := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := secretFile("good", "MARKER-s3cr3t\n")
	crlf := secretFile("crlf", "MARKER-s3cr3t\r\n")
	empty := secretFile("empty", "\n")
	missing := filepath.Join(dir, "missing")
	rest := `catalogs: {rest: [{uri: "http://x", client_id: a, client_secret_file: %s}, {uri: "http://y", token_file: %s}]}`

	var covered []string
	for _, tc := range []struct {
		name  string
		field string // the secret a success case covers
		env   []string
		extra string
		get   func(Config) string
		want  string // error part; "" for success
	}{
		{"sasl password", "kafka.sasl.password", []string{"FLOE_KAFKA_SASL_MECHANISM=PLAIN", "FLOE_KAFKA_SASL_USERNAME=u", "FLOE_KAFKA_SASL_PASSWORD_FILE=" + good}, "", func(c Config) string { return c.Kafka.SASL.Password }, ""},
		{"s3 access key", "warehouse.s3.access_key_id", []string{"FLOE_WAREHOUSE_S3_ACCESS_KEY_ID_FILE=" + crlf}, "", func(c Config) string { return c.Warehouse.S3.AccessKeyID }, ""},
		{"s3 secret key", "warehouse.s3.secret_access_key", []string{"FLOE_WAREHOUSE_S3_SECRET_ACCESS_KEY_FILE=" + good}, "", func(c Config) string { return c.Warehouse.S3.SecretAccessKey }, ""},
		{"s3 session token", "warehouse.s3.session_token", []string{"FLOE_WAREHOUSE_S3_SESSION_TOKEN_FILE=" + good}, "", func(c Config) string { return c.Warehouse.S3.SessionToken }, ""},
		{"registry password", "schema_registry.password", []string{"FLOE_SCHEMA_REGISTRY_URL=http://r", "FLOE_SCHEMA_REGISTRY_USERNAME=u", "FLOE_SCHEMA_REGISTRY_PASSWORD_FILE=" + good}, "", func(c Config) string { return c.SchemaRegistry.Password }, ""},
		{"registry bearer token", "schema_registry.bearer_token", []string{"FLOE_SCHEMA_REGISTRY_URL=http://r", "FLOE_SCHEMA_REGISTRY_BEARER_TOKEN_FILE=" + good}, "", func(c Config) string { return c.SchemaRegistry.BearerToken }, ""},
		{"webhook url", "notifications.webhook_url", []string{"FLOE_NOTIFICATIONS_WEBHOOK_URL_FILE=" + secretFile("hook", "https://hooks.example/MARKER\n")}, "", func(c Config) string { return c.Notifications.WebhookURL }, ""},
		{"rest client secret and token", "catalogs.rest[0].client_secret catalogs.rest[0].token", nil, "\n" + strings.ReplaceAll(fmtRest(rest, good, good), "\t", ""), func(c Config) string { return c.Catalogs.REST[0].ClientSecret + "|" + c.Catalogs.REST[1].Token }, ""},
		{"both forms", "", []string{"FLOE_WAREHOUSE_S3_SECRET_ACCESS_KEY=inline", "FLOE_WAREHOUSE_S3_SECRET_ACCESS_KEY_FILE=" + good}, "", nil, "warehouse.s3.secret_access_key_file: set warehouse.s3.secret_access_key or warehouse.s3.secret_access_key_file, not both"},
		{"unreadable file", "", []string{"FLOE_KAFKA_SASL_PASSWORD_FILE=" + missing}, "", nil, "kafka.sasl.password_file: secret file: open " + missing},
		{"empty file", "", []string{"FLOE_SCHEMA_REGISTRY_PASSWORD_FILE=" + empty}, "", nil, "schema_registry.password_file: " + empty + " is empty"},
		{"rest both forms", "", nil, "\n" + `catalogs: {rest: [{uri: "http://x", token: t, token_file: ` + good + `}]}`, nil, "catalogs.rest[0].token_file: set catalogs.rest[0].token or catalogs.rest[0].token_file, not both"},
	} {
		covered = append(covered, strings.Fields(tc.field)...)
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(write(t, validYAML+tc.extra), tc.env)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Load = %v, want %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "MARKER") {
					t.Fatalf("error %v shows the secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := tc.get(cfg)
			for _, v := range strings.Split(got, "|") {
				if !strings.HasSuffix(v, "MARKER-s3cr3t") && !strings.HasSuffix(v, "/MARKER") {
					t.Fatalf("secret = %q, want the file's content without its newline", got)
				}
			}
		})
	}
	// A new secret field needs a case here (and in the marker test).
	var c Config
	c.Catalogs.REST = make([]RESTCatalog, 1)
	slices.Sort(covered)
	all := SecretFields(&c)
	slices.Sort(all)
	if !slices.Equal(covered, all) {
		t.Errorf("cases cover %v, secrets are %v", covered, all)
	}
}

func fmtRest(tmpl, a, b string) string {
	return strings.Replace(strings.Replace(tmpl, "%s", a, 1), "%s", b, 1)
}
