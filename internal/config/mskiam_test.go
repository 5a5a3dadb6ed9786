package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMSKIAMFields: AWS_MSK_IAM takes its credentials from the AWS chain,
// so a username or password (inline or from a file) is an error naming the
// field rather than silently unused, and it needs TLS.
func TestMSKIAMFields(t *testing.T) {
	const marker = "pw-marker-7731"
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	iam := []string{"FLOE_KAFKA_SASL_MECHANISM=aws_msk_iam", "FLOE_KAFKA_TLS_ENABLED=true"}
	cases := []struct {
		name  string
		env   []string
		field string // "" when the config is valid
	}{
		{"valid", iam, ""},
		{"username", append(iam, "FLOE_KAFKA_SASL_USERNAME=u"), "kafka.sasl.username"},
		{"password", append(iam, "FLOE_KAFKA_SASL_PASSWORD="+marker), "kafka.sasl.password"},
		{"password file", append(iam, "FLOE_KAFKA_SASL_PASSWORD_FILE="+pw), "kafka.sasl.password_file"},
		{"no tls", []string{"FLOE_KAFKA_SASL_MECHANISM=AWS_MSK_IAM"}, "kafka.tls.enabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(write(t, validYAML), c.env)
			if c.field == "" {
				if err != nil {
					t.Fatalf("valid AWS_MSK_IAM config refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid config accepted")
			}
			var fe *FieldError
			if !(errors.As(err, &fe) && fe.Field == c.field) && !strings.Contains(err.Error(), c.field+":") {
				t.Fatalf("error %q does not name %s", err, c.field)
			}
			if strings.Contains(err.Error(), marker) {
				t.Fatalf("error %q prints the secret", err)
			}
		})
	}
}
