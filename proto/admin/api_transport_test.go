package admin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/floe-io/floe/internal/testing/testcerts"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// TestOpenAPI checks /openapi.json: Swagger 2.0 with every HTTP route of
// admin_http.yaml.
func TestOpenAPI(t *testing.T) {
	s := startAPI(t, &fakeBackend{}, Options{Tokens: testTokens(t)})
	code, hdr, body := do(t, httpClient(t), "GET", "http://"+s.Addr()+"/openapi.json", "", "")
	if code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("openapi.json = %d %s", code, hdr.Get("Content-Type"))
	}
	var doc struct {
		Swagger string                    `json:"swagger"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" {
		t.Errorf("swagger = %q", doc.Swagger)
	}
	rules, err := os.ReadFile("../floe/admin/v1/admin_http.yaml")
	if err != nil {
		t.Fatal(err)
	}
	routes := regexp.MustCompile(`(?m)^\s+(get|post|put|delete|patch): (\S+)$`).FindAllStringSubmatch(string(rules), -1)
	if len(routes) != len(methodScopes) {
		t.Errorf("admin_http.yaml has %d routes for %d RPCs", len(routes), len(methodScopes))
	}
	for _, r := range routes {
		ops, ok := doc.Paths[r[2]]
		if !ok {
			t.Errorf("openapi.json lacks path %s", r[2])
			continue
		}
		if _, ok := ops[r[1]]; !ok {
			t.Errorf("openapi.json lacks %s %s", r[1], r[2])
		}
	}
}

// TestLegacyListen keeps Listen (a Source only) serving the plain routes
// without the API.
func TestLegacyListen(t *testing.T) {
	s, err := Listen("127.0.0.1:0", src{rep: sample()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	defer func() {
		_ = s.Shutdown(context.Background())
		<-done
	}()
	hc := httpClient(t)
	if code, _, _ := do(t, hc, "GET", "http://"+s.Addr()+"/v1/status", "", ""); code != 200 {
		t.Errorf("status = %d", code)
	}
	if code, _, _ := do(t, hc, "GET", "http://"+s.Addr()+"/v1/tables", "", ""); code != 404 {
		t.Errorf("API route without a backend = %d", code)
	}
}

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, made for one test.
type testPKI struct {
	pool           *x509.CertPool
	server, client tls.Certificate
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	ca := testcerts.CA(t)
	return testPKI{pool: ca.Pool(),
		server: testcerts.Leaf(t, ca, "floe node", x509.ExtKeyUsageServerAuth).TLS(),
		client: testcerts.Leaf(t, ca, "floe admin", x509.ExtKeyUsageClientAuth).TLS()}
}

// TestTLS serves the API over TLS and mutual TLS: gRPC (HTTP/2 by ALPN)
// and HTTP/1.1 and HTTP/2 clients get through; with mutual TLS a client
// without a certificate does not.
func TestTLS(t *testing.T) {
	pki := newPKI(t)
	for _, mutual := range []bool{false, true} {
		t.Run(fmt.Sprintf("mutual=%v", mutual), func(t *testing.T) {
			cfg := &tls.Config{Certificates: []tls.Certificate{pki.server}}
			if mutual {
				cfg.ClientCAs, cfg.ClientAuth = pki.pool, tls.RequireAndVerifyClientCert
			}
			s := startAPI(t, &fakeBackend{}, Options{TLS: cfg, Tokens: testTokens(t)})
			client := &tls.Config{RootCAs: pki.pool}
			if mutual {
				client.Certificates = []tls.Certificate{pki.client}
			}

			cc, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(client)))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if h, err := adminv1.NewHealthServiceClient(cc).Check(ctx, &adminv1.HealthCheckRequest{}); err != nil || !h.Live {
				t.Fatalf("gRPC health over TLS: %v %v", h, err)
			}
			if _, err := adminv1.NewTableServiceClient(cc).ListTables(withToken(ctx, readToken), &adminv1.ListTablesRequest{}); err != nil {
				t.Fatalf("gRPC ListTables over TLS: %v", err)
			}

			for _, h2 := range []bool{false, true} {
				tr := &http.Transport{TLSClientConfig: client.Clone(), ForceAttemptHTTP2: h2}
				if !h2 {
					tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
				}
				resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + s.Addr() + "/v1/health")
				if err != nil {
					t.Fatalf("HTTP (h2 %v) over TLS: %v", h2, err)
				}
				resp.Body.Close()
				want := 1
				if h2 {
					want = 2
				}
				if resp.StatusCode != 200 || resp.ProtoMajor != want {
					t.Errorf("HTTP (h2 %v) over TLS: %d %s", h2, resp.StatusCode, resp.Proto)
				}
				tr.CloseIdleConnections()
			}

			if !mutual {
				return
			}
			anon := &tls.Config{RootCAs: pki.pool}
			tr := &http.Transport{TLSClientConfig: anon}
			defer tr.CloseIdleConnections()
			if resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + s.Addr() + "/healthz"); err == nil {
				resp.Body.Close()
				t.Errorf("mutual TLS let a client without a certificate in: %s", resp.Status)
			}
			cc2, err := grpc.NewClient(s.Addr(), grpc.WithTransportCredentials(credentials.NewTLS(anon)))
			if err != nil {
				t.Fatal(err)
			}
			defer cc2.Close()
			short, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel2()
			if _, err := adminv1.NewHealthServiceClient(cc2).Check(short, &adminv1.HealthCheckRequest{}); err == nil {
				t.Errorf("mutual TLS let a gRPC client without a certificate in")
			}
		})
	}
}
