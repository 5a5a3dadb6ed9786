package config

import (
	"net/url"
	"os"
	"strings"
	"time"
)

// Admin configures the admin API (gRPC and HTTP/JSON on node.admin_addr).
// Bearer tokens come from the auth block; /healthz, /readyz, /metrics and
// /openapi.json stay open.
type Admin struct {
	// TLS serves the admin port over TLS; with client_ca_file set, clients
	// must present a certificate signed by it (mutual TLS).
	TLS AdminTLS `yaml:"tls"`
}

// AdminTLS is the admin port's certificate and, for mutual TLS, the CA of
// client certificates (PEM files).
type AdminTLS struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// Enabled reports whether the admin port serves TLS.
func (t AdminTLS) Enabled() bool { return t.CertFile != "" }

// Notifications configures messages Floe sends itself when a table changes
// state (the Prometheus alert rules in deploy/ are the other way to learn).
type Notifications struct {
	// WebhookURL receives Slack-compatible JSON ({"text": ...}); empty: off.
	WebhookURL string `yaml:"webhook_url"`
	// WebhookURLFile: the webhook URL (its path is a secret) from a file.
	WebhookURLFile string `yaml:"webhook_url_file"`
	// Interval is how often table states are checked (default 5s).
	Interval Duration `yaml:"interval"`
}

func (c *Config) validateAdmin(bad func(field, format string, args ...any)) {
	// Parsed as the node will parse it: an unknown scope (":superuser")
	// is refused here, not turned into a read token.
	if _, err := ParseInlineTokens(c.Auth.Tokens); err != nil {
		bad("auth.tokens", "%s", strings.TrimPrefix(err.Error(), "auth.tokens "))
	}
	t := c.Admin.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		bad("admin.tls.key_file", "admin.tls.cert_file and admin.tls.key_file go together")
	}
	if t.ClientCAFile != "" && t.CertFile == "" {
		bad("admin.tls.client_ca_file", "mutual TLS needs admin.tls.cert_file and key_file")
	}
	for field, f := range map[string]string{"admin.tls.cert_file": t.CertFile, "admin.tls.key_file": t.KeyFile, "admin.tls.client_ca_file": t.ClientCAFile} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			bad(field, "%v", err)
		}
	}
	if u := c.Notifications.WebhookURL; u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			bad("notifications.webhook_url", "must be an http(s) URL")
		}
	}
	if d := c.Notifications.Interval.D(); d != 0 && d < 100*time.Millisecond {
		bad("notifications.interval", "%s is below the 100ms minimum", d)
	}
}
