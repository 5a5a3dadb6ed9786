package admin

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/floe-io/floe/proto/auth"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// TestMethodScopesCoverEveryRPC keeps the scope table complete: every
// method of the three services has a scope, and the table names nothing
// else.
func TestMethodScopesCoverEveryRPC(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range []*grpc.ServiceDesc{&adminv1.ClusterService_ServiceDesc, &adminv1.TableService_ServiceDesc, &adminv1.HealthService_ServiceDesc} {
		for _, m := range d.Methods {
			name := "/" + d.ServiceName + "/" + m.MethodName
			seen[name] = true
			if _, ok := methodScopes[name]; !ok {
				t.Errorf("%s has no scope in methodScopes", name)
			}
		}
		if len(d.Streams) > 0 {
			t.Errorf("%s has streaming methods; the auth interceptor covers unary calls only", d.ServiceName)
		}
	}
	for name := range methodScopes {
		if !seen[name] {
			t.Errorf("methodScopes names %s, which is not an RPC", name)
		}
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAuth checks every RPC over gRPC and HTTP, and the plain routes, with
// no token, a read token and an admin token.
func TestAuth(t *testing.T) {
	f := &fakeBackend{}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s := startAPI(t, f, Options{Log: log, Tokens: testTokens(t),
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("floe_up 1\n")) })})
	cc := dialGRPC(t, s.Addr())
	hc := httpClient(t)
	base := "http://" + s.Addr()

	for _, c := range rpcCases() {
		need := methodScopes[c.method]
		for _, tok := range []string{"", "wrong-token-0123456789", readToken, adminToken} {
			var wantCode codes.Code
			wantHTTP := http.StatusOK
			switch {
			case need == scopeNone || tok == adminToken:
			case tok == "" || tok == "wrong-token-0123456789":
				wantCode, wantHTTP = codes.Unauthenticated, http.StatusUnauthorized
			case need == auth.ScopeAdmin:
				wantCode, wantHTTP = codes.PermissionDenied, http.StatusForbidden
			}
			_, err := c.grpc(withToken(context.Background(), tok), cc)
			if got := status.Code(err); got != wantCode {
				t.Errorf("gRPC %s with token %q: %v, want %v", c.method, tok, err, wantCode)
			}
			code, hdr, body := do(t, hc, c.verb, base+c.path, c.body, tok)
			if code != wantHTTP {
				t.Errorf("HTTP %s %s with token %q = %d, want %d: %s", c.verb, c.path, tok, code, wantHTTP, body)
			}
			if code == http.StatusUnauthorized && !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("HTTP %s %s 401 without WWW-Authenticate", c.verb, c.path)
			}
		}
	}

	// Plain routes: probes, metrics and the API description are open;
	// the status report needs read, the legacy POST routes admin.
	for _, c := range []struct {
		verb, path      string
		none, read, adm int
	}{
		{"GET", "/healthz", 200, 200, 200},
		{"GET", "/readyz", 200, 200, 200},
		{"GET", "/metrics", 200, 200, 200},
		{"GET", "/openapi.json", 200, 200, 200},
		{"GET", "/v1/health", 200, 200, 200},
		{"GET", "/v1/status", 401, 200, 200},
		{"POST", "/v1/tables/db.orders/maintenance", 401, 403, 200},
		{"POST", "/v1/tables/db.orders/resume", 401, 403, 200},
	} {
		for tok, want := range map[string]int{"": c.none, readToken: c.read, adminToken: c.adm} {
			code, hdr, body := do(t, hc, c.verb, base+c.path, "", tok)
			if code != want {
				t.Errorf("%s %s with token %q = %d, want %d: %s", c.verb, c.path, tok, code, want, body)
			}
			if code == http.StatusUnauthorized && hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s 401 without WWW-Authenticate", c.verb, c.path)
			}
		}
	}

	out := logs.String()
	for _, want := range []string{"admin request refused", "method=/floe.admin.v1.ClusterService/DrainNode",
		`reason="token scope does not allow this operation"`, `reason="no bearer token"`, `reason="unknown bearer token"`,
		`method="POST /v1/tables/db.orders/resume"`, "remote=127.0.0.1"} {
		if !strings.Contains(out, want) {
			t.Errorf("refusal log lacks %q", want)
		}
	}
	for _, secret := range []string{readToken, adminToken, "wrong-token-0123456789"} {
		if strings.Contains(out, secret) {
			t.Errorf("refusal log contains the token %q", secret)
		}
	}
}
