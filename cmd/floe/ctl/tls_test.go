package ctl

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/floe-io/floe/internal/testing/testcerts"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// keyPair and its helpers come from internal/testcerts.
type keyPair = testcerts.Pair

func newCert(t *testing.T, parent *keyPair, tmpl *x509.Certificate) *keyPair {
	return testcerts.New(t, parent, tmpl)
}

func TestMutualTLS(t *testing.T) {
	t.Setenv("FLOE_ADDR", "")
	t.Setenv("FLOE_TOKEN", "")
	dir := t.TempDir()
	ca := newCert(t, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "test ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
	srvCert := newCert(t, ca, &x509.Certificate{Subject: pkix.Name{CommonName: "floe"}, DNSNames: []string{"floe.test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
	cliCert := newCert(t, ca, &x509.Certificate{Subject: pkix.Name{CommonName: "operator"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature})
	caFile, _ := ca.Files(t, dir, "ca")
	certFile, keyFile := cliCert.Files(t, dir, "client")

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	r := &rec{ready: true}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{srvCert.TLS()},
		ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})))
	adminv1.RegisterClusterServiceServer(s, clusterSrv{rec: r})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	addr := lis.Addr().String()

	mustRun(t, "--addr", addr, "--ca-file", caFile, "--cert-file", certFile, "--key-file", keyFile, "--token", "t", "members")
	mustRun(t, "--addr", addr, "--ca-file", caFile, "--cert-file", certFile, "--key-file", keyFile, "--server-name", "floe.test", "members")
	r.mu.Lock()
	got := r.auth[0]
	r.mu.Unlock()
	if got != "Bearer t" {
		t.Fatalf("authorization %q", got)
	}
	for _, args := range [][]string{
		{"members"},                      // plaintext to a TLS port
		{"--ca-file", caFile, "members"}, // no client certificate
		{"--cert-file", certFile, "--key-file", keyFile, "members"},                                                     // server not trusted
		{"--ca-file", caFile, "--cert-file", certFile, "--key-file", keyFile, "--server-name", "other.test", "members"}, // wrong name
	} {
		_, err := run(t, append([]string{"--addr", addr, "--timeout", "5s"}, args...)...)
		if ExitCode(err) == ExitOK {
			t.Errorf("%v: succeeded", args)
		}
	}
	_, err = run(t, "--addr", addr, "--ca-file", filepath.Join(dir, "missing.pem"), "members")
	wantCode(t, err, ExitUsage)
}

func TestStatusJSONOverTLS(t *testing.T) {
	t.Setenv("FLOE_ADDR", "")
	t.Setenv("FLOE_TOKEN", "")
	t.Setenv("FLOE_NODE_ADMIN_ADDR", "")
	var gotAuth string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		gotAuth = q.Header.Get("Authorization")
		w.Write([]byte(`{"node":"n1","tables":[]}`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	addr := strings.TrimPrefix(srv.URL, "https://")
	out, err := runCmd(t, StatusCommand(), "--addr", addr, "--ca-file", caFile, "--token", "tok", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if out != "{\n  \"node\": \"n1\",\n  \"tables\": []\n}\n" || gotAuth != "Bearer tok" {
		t.Fatalf("output %q, authorization %q", out, gotAuth)
	}
	// Plain http to a TLS port fails.
	_, err = runCmd(t, StatusCommand(), "--addr", addr, "--json")
	if ExitCode(err) == ExitOK {
		t.Fatal("http to an https port succeeded")
	}
}

// TestUnderRoot runs the commands as the binary will: under a root command.
func TestUnderRoot(t *testing.T) {
	r, addr := serve(t)
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "floe", SilenceUsage: true, SilenceErrors: true}
		root.AddCommand(Command(), StatusCommand())
		return root
	}
	mustRoot := func(args ...string) string {
		t.Helper()
		out, err := runCmd(t, newRoot(), args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}
	mustRoot("ctl", "--addr", addr, "tables", "pause", "a.b")
	wantReq(t, r.last(t), &adminv1.PauseTableRequest{Table: "a.b"})
	mustRoot("status", "--addr", addr)
	for _, args := range [][]string{
		{"ctl", "--addr", addr, "members", "--bogus"},
		{"ctl", "--bogus"},
		{"ctl", "frobnicate"},
		{"ctl", "tables", "frobnicate"},
		{"status", "--bogus"},
		{"status", "extra"},
	} {
		_, err := runCmd(t, newRoot(), args...)
		if ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit code %d (%v), want 2", args, ExitCode(err), err)
		}
	}
	if out := mustRoot("ctl", "completion", "bash"); !strings.Contains(out, "floe") {
		t.Error("completion is not of the floe tree")
	}
	// Dynamic completion of table names and of flag values.
	out := mustRoot("__complete", "ctl", "--addr", addr, "tables", "get", "")
	if !strings.Contains(out, "shop.orders\nshop.users\n") {
		t.Errorf("table completion:\n%s", out)
	}
	out = mustRoot("__complete", "ctl", "tables", "rewind", "a.b", "--policy", "")
	if !strings.Contains(out, "append\nreplace\n") {
		t.Errorf("policy completion:\n%s", out)
	}
}
