package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
)

// Secrets from files. Every secret of the configuration has a *_file form
// (kafka.sasl.password_file, ...) naming a file that holds it, the way
// Docker and ECS mount secrets; the file's trailing newline is dropped.
// Setting both forms is an error naming both fields, and so is a file that
// cannot be read (naming the field and the path) or that is empty.

// secretField is one secret and its file form.
type secretField struct {
	field string // kafka.sasl.password
	value *string
	file  *string
}

// secretFields lists every secret with its file form; the marker test
// (cmd/floe) plants a value in each.
func (c *Config) secretFields() []secretField {
	out := []secretField{
		{"kafka.sasl.password", &c.Kafka.SASL.Password, &c.Kafka.SASL.PasswordFile},
		{"warehouse.s3.access_key_id", &c.Warehouse.S3.AccessKeyID, &c.Warehouse.S3.AccessKeyIDFile},
		{"warehouse.s3.secret_access_key", &c.Warehouse.S3.SecretAccessKey, &c.Warehouse.S3.SecretAccessKeyFile},
		{"warehouse.s3.session_token", &c.Warehouse.S3.SessionToken, &c.Warehouse.S3.SessionTokenFile},
		{"schema_registry.password", &c.SchemaRegistry.Password, &c.SchemaRegistry.PasswordFile},
		{"schema_registry.bearer_token", &c.SchemaRegistry.BearerToken, &c.SchemaRegistry.BearerTokenFile},
		{"notifications.webhook_url", &c.Notifications.WebhookURL, &c.Notifications.WebhookURLFile},
	}
	for i := range c.Catalogs.REST {
		r := &c.Catalogs.REST[i]
		p := fmt.Sprintf("catalogs.rest[%d].", i)
		out = append(out,
			secretField{p + "token", &r.Token, &r.TokenFile},
			secretField{p + "client_secret", &r.ClientSecret, &r.ClientSecretFile})
	}
	return out
}

// SecretFields returns the dotted names of every secret field (without
// the _file forms), for documentation and tests.
func SecretFields(c *Config) []string {
	var out []string
	for _, s := range c.secretFields() {
		out = append(out, s.field)
	}
	return out
}

// ErrSecretFile: a *_file secret could not be used.
var ErrSecretFile = errors.New("secret file")

// MaxSecretFileBytes caps what a *_file secret may hold: a password, key or
// token is far smaller, and a path set by mistake to a large or endless file
// (/dev/zero) must fail start-up, not fill memory.
const MaxSecretFileBytes = 64 << 10

// readSecrets fills each secret from its file form. Errors name the field
// and the path, never the content.
func (c *Config) readSecrets() error {
	var errs []error
	for _, s := range c.secretFields() {
		if *s.file == "" {
			continue
		}
		if *s.value != "" {
			errs = append(errs, &FieldError{Field: s.field + "_file", Msg: "set " + s.field + " or " + s.field + "_file, not both"})
			continue
		}
		data, err := readCapped(*s.file, MaxSecretFileBytes)
		if err != nil {
			// The os error names the path.
			errs = append(errs, &FieldError{Field: s.field + "_file", Msg: fmt.Errorf("%w: %w", ErrSecretFile, err).Error()})
			continue
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
		if v == "" {
			errs = append(errs, &FieldError{Field: s.field + "_file", Msg: fmt.Sprintf("%s is empty", *s.file)})
			continue
		}
		*s.value = v
	}
	return errors.Join(errs...)
}

// redacted stands for a secret that is set in every printed form.
const redacted = "[redacted]"

// Redacted returns a copy of c with every secret that is set (and the
// inline auth tokens and internal TLS key) replaced by [redacted]: what may be printed or
// logged. The copy shares no slice with c.
func (c Config) Redacted() Config {
	r := c
	r.Catalogs.REST = slices.Clone(c.Catalogs.REST)
	for _, s := range r.secretFields() {
		if *s.value != "" {
			*s.value = redacted
		}
	}
	if r.Auth.Tokens != "" {
		r.Auth.Tokens = redacted
	}
	// The internal TLS key has a file form of its own (key_file, re-read
	// on change), so it is not among secretFields' *_file pairs.
	if r.Cluster.TLS.KeyPEM != "" {
		r.Cluster.TLS.KeyPEM = redacted
	}
	return r
}

// printable has Config's fields without its methods, so String does not
// call itself.
type printable Config

// String prints the configuration with its secrets redacted, so that a
// %v of a Config in a log or an error shows none.
func (c Config) String() string { return fmt.Sprintf("%+v", printable(c.Redacted())) }

// LogValue implements slog.LogValuer the same way.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// readCapped reads a file of at most limit bytes; a longer one is an error
// naming the path and the limit, found after reading limit+1 bytes.
func readCapped(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", path, limit)
	}
	return data, nil
}
