package backend

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/proto/auth"
)

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

func newPeerClient(cfg config.Config, serverTLS *tls.Config) peerClient {
	p := peerClient{client: http.DefaultClient, scheme: "http",
		token: auth.PeerToken(cfg.Auth.TokensFile, cfg.Auth.Tokens, auth.ScopeRead),
		admin: auth.PeerToken(cfg.Auth.TokensFile, cfg.Auth.Tokens, auth.ScopeAdmin)}
	if serverTLS == nil {
		return p
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: serverTLS.Certificates, RootCAs: serverTLS.ClientCAs}
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
