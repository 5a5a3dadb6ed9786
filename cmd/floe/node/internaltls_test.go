package node

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floe-io/floe/cluster/tlsconf"
	"github.com/floe-io/floe/internal/config"
)

// TestLoadInternalTLS: no cluster.tls, no TLS; files that are missing or
// do not match stop the start with an error naming cluster.tls and the
// file; a good set loads with its server name.
func TestLoadInternalTLS(t *testing.T) {
	dir := t.TempDir()
	ca, err := tlsconf.NewCA("ca", 0)
	if err != nil {
		t.Fatal(err)
	}
	caFile, _, err := ca.WriteFiles(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := tlsconf.NewCert(ca, tlsconf.CertRequest{NodeID: "n1", ServerName: "server.prod.floe"})
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := leaf.WriteFiles(dir, "n1")
	if err != nil {
		t.Fatal(err)
	}
	caKey := filepath.Join(dir, "ca-key.pem")
	other, err := tlsconf.NewCA("other", 0)
	if err != nil {
		t.Fatal(err)
	}
	pem := func(ca, cert, key []byte) config.ClusterTLS {
		return config.ClusterTLS{CAPEM: string(ca), CertPEM: string(cert), KeyPEM: string(key), ServerName: "server.prod.floe", VerifyIncoming: true}
	}
	for _, c := range []struct {
		name string
		tls  config.ClusterTLS
		want string // error substring; "" loads (or is off)
	}{
		{"off", config.ClusterTLS{}, ""},
		{"good", config.ClusterTLS{CAFile: caFile, CertFile: cert, KeyFile: key, ServerName: "server.prod.floe", VerifyIncoming: true}, ""},
		{"missing cert", config.ClusterTLS{CAFile: caFile, CertFile: filepath.Join(dir, "nope.pem"), KeyFile: key}, "nope.pem"},
		{"key of another certificate", config.ClusterTLS{CAFile: caFile, CertFile: cert, KeyFile: caKey}, "key_file"},
		{"not a CA file", config.ClusterTLS{CAFile: key, CertFile: cert, KeyFile: key}, "ca_file"},
		{"inline pem", pem(ca.Cert, leaf.Cert, leaf.Key), ""},
		{"inline ca not pem", pem([]byte("x"), leaf.Cert, leaf.Key), "cluster.tls.ca_pem: "},
		{"inline key of the ca", pem(ca.Cert, leaf.Cert, ca.Key), "cluster.tls.key_pem: "},
		{"inline cert of another ca", pem(other.Cert, leaf.Cert, leaf.Key), "cluster.tls.cert_pem: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := loadInternalTLS(c.tls, slog.Default())
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.tls.Enabled() != (src != nil) || (src != nil && src.ServerName() != c.tls.ServerName) {
					t.Fatalf("source %v for %+v", src, c.tls)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "cluster.tls") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("loadInternalTLS = %v, want an error naming cluster.tls and %q", err, c.want)
			}
		})
	}
}
