package node

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/proto/auth"
	"github.com/floe-io/floe/proto/metrics"
)

// adminOptions builds the admin API's options: bearer tokens (the auth
// block), TLS or mutual TLS (admin.tls) and the metrics handler.
func adminOptions(cfg config.Config, m *metrics.Metrics, n *Node) (admin.Options, error) {
	tokens, err := auth.Load(cfg.Auth.TokensFile, cfg.Auth.Tokens)
	if err != nil {
		return admin.Options{}, &ConfigError{Err: fmt.Errorf("auth: %w", err)}
	}
	opts := admin.Options{Log: n.log.With("component", "admin"), Tokens: tokens, Metrics: m.Handler()}
	t := cfg.Admin.TLS
	if !t.Enabled() {
		return opts, nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return admin.Options{}, &ConfigError{Err: fmt.Errorf("admin.tls.cert_file: %w", err)}
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return admin.Options{}, &ConfigError{Err: fmt.Errorf("admin.tls.client_ca_file: %w", err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return admin.Options{}, &ConfigError{Err: fmt.Errorf("admin.tls.client_ca_file: %s holds no PEM certificate", t.ClientCAFile)}
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	opts.TLS = tc
	return opts, nil
}
