package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
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

// peerClient is how a node calls its peers' admin APIs (to find where a
// table is suspended): same scheme as its own admin port, its own
// certificate as client certificate and the client CA as trusted roots
// under mutual TLS, and a token from the shared configuration.
type peerClient struct {
	client *http.Client
	scheme string
	token  string // read scope
	admin  string // admin scope, for maintenance run on the committer
}

func newPeerClient(cfg config.Config, opts admin.Options) peerClient {
	p := peerClient{client: http.DefaultClient, scheme: "http",
		token: auth.PeerToken(cfg.Auth.TokensFile, cfg.Auth.Tokens, auth.ScopeRead),
		admin: auth.PeerToken(cfg.Auth.TokensFile, cfg.Auth.Tokens, auth.ScopeAdmin)}
	if opts.TLS == nil {
		return p
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: opts.TLS.Certificates, RootCAs: opts.TLS.ClientCAs}
	p.client = &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}
	p.scheme = "https"
	return p
}

// fetch reads a peer's status report.
func (p peerClient) fetch(ctx context.Context, addr string) (status.Report, error) {
	return admin.FetchWith(ctx, p.client, p.scheme+"://"+addr, p.token)
}

// maintain asks a peer (the table's committer) to run a table's maintenance
// and returns its JSON answer.
func (p peerClient) maintain(ctx context.Context, addr, table string, force bool) (json.RawMessage, error) {
	path := "/v1/tables/" + table + "/maintenance"
	if force {
		path += "?force=true"
	}
	body, err := admin.PostWith(ctx, p.client, p.scheme+"://"+addr, path, p.admin, "maintenance of "+table+" on the committer at "+addr)
	switch {
	case errors.Is(err, admin.ErrRefused):
		return nil, fmt.Errorf("%w: %w", admin.ErrConflict, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", admin.ErrUnavailable, err)
	}
	return json.RawMessage(body), nil
}
