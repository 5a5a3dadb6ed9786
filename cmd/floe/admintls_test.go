package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/cmd/floe/ctl"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testcerts"
	"github.com/floe-io/floe/internal/testing/testnode"
)

// TestAdminMutualTLS starts a node whose admin port requires client
// certificates (admin.tls with client_ca_file) and a token: floe ctl with
// the CA, a client certificate and the token gets through; without the
// client certificate, or over plaintext, it does not; the token is still
// required over mutual TLS.
// adminTLSToken is the admin token of the mutual-TLS test node.
const adminTLSToken = "admintls-test-admin-token-0123456789"

func TestAdminMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	dir := t.TempDir()
	ca := testcerts.CA(t)
	caFile, _ := ca.Files(t, dir, "ca")
	srvCert, srvKey := testcerts.Leaf(t, ca, "floe", x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth).Files(t, dir, "server")
	cliCert, cliKey := testcerts.Leaf(t, ca, "operator", x509.ExtKeyUsageClientAuth).Files(t, dir, "client")

	kc, _ := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "tls")})
	cfg := testnode.Config(t, dir, kc.ListenAddrs(), []config.Table{{Topic: "tls", Namespace: "sec"}})
	cfg.Admin.TLS = config.AdminTLS{CertFile: srvCert, KeyFile: srvKey, ClientCAFile: caFile}
	cfg.Auth.Tokens = adminTLSToken + ":admin"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	addr := n.AdminAddr()

	runCtl := func(args ...string) (string, int) {
		cmd := ctl.Command()
		var out, errOut bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		cmd.SetArgs(append([]string{"--addr", addr, "--timeout", "5s"}, args...))
		err := cmd.ExecuteContext(context.Background())
		return out.String() + errOut.String() + func() string {
			if err != nil {
				return err.Error()
			}
			return ""
		}(), ctl.ExitCode(err)
	}
	tlsArgs := []string{"--ca-file", caFile, "--cert-file", cliCert, "--key-file", cliKey}
	if out, code := runCtl(append([]string{"members", "--token", adminTLSToken}, tlsArgs...)...); code != 0 || !strings.Contains(out, "test-1") {
		t.Fatalf("ctl over mutual TLS with a token: exit %d: %s", code, out)
	}
	if out, code := runCtl(append([]string{"members"}, tlsArgs...)...); code != ctl.ExitAuth {
		t.Fatalf("ctl over mutual TLS without a token: exit %d, want %d: %s", code, ctl.ExitAuth, out)
	}
	if out, code := runCtl("members", "--token", adminTLSToken, "--ca-file", caFile); code == 0 {
		t.Fatalf("ctl without a client certificate got through: %s", out)
	}
	if out, code := runCtl("members", "--token", adminTLSToken); code == 0 {
		t.Fatalf("ctl over plaintext got through to a TLS port: %s", out)
	}
	// The container health check (floe health) probes its own node with the
	// node's environment: HTTPS, and its own certificate under mutual TLS.
	t.Setenv("FLOE_ADMIN_TLS_CERT_FILE", srvCert)
	t.Setenv("FLOE_ADMIN_TLS_KEY_FILE", srvKey)
	t.Setenv("FLOE_ADMIN_TLS_CLIENT_CA_FILE", caFile)
	for _, args := range [][]string{{"--admin-addr", addr}, {"--admin-addr", addr, "--ready"}} {
		h := healthCmd()
		h.SetArgs(args)
		h.SetOut(&bytes.Buffer{})
		if err := h.Execute(); err != nil {
			t.Fatalf("floe health %v on a mutual-TLS port: %v", args, err)
		}
	}
	// HTTP: a plaintext request to the TLS port gets no answer it can use.
	if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plaintext /healthz answered 200 on a TLS port")
		}
	}
}
