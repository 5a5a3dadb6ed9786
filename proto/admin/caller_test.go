package admin

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/floe-io/floe/proto/auth"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// TestCallerRecorded: the backend sees who asked for a change, over gRPC
// and through the gateway alike: the client certificate's subject under
// mutual TLS, else the token's fingerprint (never the token), else
// anonymous.
func TestCallerRecorded(t *testing.T) {
	pki := newPKI(t)
	certCaller := "cert:CN=floe admin"
	for _, c := range []struct {
		name   string
		mutual bool
		tokens bool
		want   string
	}{
		{"token", false, true, auth.Fingerprint(adminToken)},
		{"client certificate", true, true, certCaller},
		{"no authentication", false, false, "anonymous"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &fakeBackend{}
			opts := Options{}
			if c.tokens {
				opts.Tokens = testTokens(t)
			}
			creds, client := insecure.NewCredentials(), (*tls.Config)(nil)
			scheme := "http"
			if c.mutual {
				opts.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientCAs: pki.pool, ClientAuth: tls.RequireAndVerifyClientCert}
				client = &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{pki.client}}
				creds, scheme = credentials.NewTLS(client), "https"
			}
			s := startAPI(t, b, opts)
			cc, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tok := ""
			if c.tokens {
				tok = adminToken
			}
			if _, err := adminv1.NewTableServiceClient(cc).PauseTable(withToken(ctx, tok), &adminv1.PauseTableRequest{Table: "db.orders"}); err != nil {
				t.Fatalf("gRPC pause: %v", err)
			}
			req, _ := http.NewRequestWithContext(ctx, "POST", scheme+"://"+s.Addr()+"/v1/tables/db.orders:pause", nil)
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: client}}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("HTTP pause: %s", resp.Status)
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if !slices.Equal(b.callers, []string{c.want, c.want}) {
				t.Fatalf("callers %q, want %q over both", b.callers, c.want)
			}
		})
	}
}
