package tlsconf

import (
	"errors"
	"strings"
	"testing"
)

// TestInlinePEM: inline material that is complete and consistent serves
// mutual TLS with a peer using files; anything else is refused at Load
// naming the field, without quoting the key.
func TestInlinePEM(t *testing.T) {
	s := newSet(t)
	node, err := NewCert(s.ca, CertRequest{NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	other := newSet(t)
	foreign, err := NewCert(other.ca, CertRequest{NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	unnamed, err := NewCert(s.ca, CertRequest{NodeID: "n1", ServerName: "admin.floe"})
	if err != nil {
		t.Fatal(err)
	}
	bundle := append(append([]byte{}, other.ca.Cert...), s.ca.Cert...)
	for _, c := range []struct {
		name           string
		ca, cert, key  []byte
		field, message string // "" loads
	}{
		{"good", s.ca.Cert, node.Cert, node.Key, "", ""},
		{"good with a CA bundle", bundle, node.Cert, node.Key, "", ""},
		{"ca not PEM", []byte("not pem"), node.Cert, node.Key, "ca_pem", "no PEM CERTIFICATE"},
		{"ca empty", nil, node.Cert, node.Key, "ca_pem", "no PEM CERTIFICATE"},
		{"ca is a key", s.ca.Key, node.Cert, node.Key, "ca_pem", "PRIVATE KEY block"},
		{"cert not PEM", s.ca.Cert, []byte("-----BEGIN CERTIFICATE-----\nxx"), node.Key, "cert_pem", "no PEM CERTIFICATE"},
		{"key not PEM", s.ca.Cert, node.Cert, []byte("hunter2"), "key_pem", "no PEM private key"},
		{"key of another certificate", s.ca.Cert, node.Cert, foreign.Key, "key_pem", "not the private key of cert_pem"},
		{"cert of another CA", s.ca.Cert, foreign.Cert, foreign.Key, "cert_pem", "not signed by ca_pem"},
		{"cert without the server name", s.ca.Cert, unnamed.Cert, unnamed.Key, "cert_pem", "lacks the server name SAN server.floe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := Load(Files{CAPEM: c.ca, CertPEM: c.cert, KeyPEM: c.key, VerifyIncoming: true}, nil)
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				peer := load(t, s.node(t, CertRequest{NodeID: "peer-" + strings.ReplaceAll(c.name, " ", "-")}))
				for _, dir := range []struct{ srv, cli *Source }{{src, peer}, {peer, src}} {
					if srvErr, cliErr, _ := handshake(t, dir.srv.ServerConfig(), dir.cli.ClientConfig()); srvErr != nil || cliErr != nil {
						t.Fatalf("handshake: server %v, client %v", srvErr, cliErr)
					}
				}
				return
			}
			var me *MaterialError
			if !errors.As(err, &me) || me.Field != c.field || !errors.Is(err, ErrMaterial) || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("Load = %v, want a %s error with %q", err, c.field, c.message)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY-----") || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error quotes the key: %v", err)
			}
		})
	}
}
