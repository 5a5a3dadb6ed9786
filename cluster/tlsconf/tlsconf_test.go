package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// set is a CA and node certificates written to a directory.
type set struct {
	dir string
	ca  PEMPair
}

func newSet(t *testing.T) *set {
	t.Helper()
	ca, err := NewCA("floe test ca", 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, _, err := ca.WriteFiles(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	return &set{dir: dir, ca: ca}
}

func (s *set) node(t *testing.T, req CertRequest) Files {
	t.Helper()
	p, err := NewCert(s.ca, req)
	if err != nil {
		t.Fatal(err)
	}
	cf, kf, err := p.WriteFiles(s.dir, req.NodeID)
	if err != nil {
		t.Fatal(err)
	}
	return Files{CAFile: filepath.Join(s.dir, "ca.pem"), CertFile: cf, KeyFile: kf, VerifyIncoming: true}
}

func load(t *testing.T, f Files) *Source {
	t.Helper()
	s, err := Load(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// handshake runs one TLS handshake over a pipe; it returns the server's
// and the client's errors and the certificate the client saw.
func handshake(t *testing.T, server, client *tls.Config) (srvErr, cliErr error, seen *x509.Certificate) {
	t.Helper()
	// Loopback TCP, not net.Pipe: a pipe's unbuffered writes would hold
	// each close_notify until its deadline.
	a, b := tcpPair(t)
	defer a.Close()
	defer b.Close()
	_ = a.SetDeadline(time.Now().Add(10 * time.Second))
	_ = b.SetDeadline(time.Now().Add(10 * time.Second))
	done := make(chan error, 1)
	go func() {
		c := tls.Server(a, server)
		err := c.Handshake()
		if err == nil {
			// TLS 1.3: the client learns of a refused certificate on its
			// first read; read once so that it does.
			_, err = c.Write([]byte{1})
		}
		_ = c.Close()
		done <- err
	}()
	c := tls.Client(b, client)
	cliErr = c.Handshake()
	if cliErr == nil {
		seen = c.ConnectionState().PeerCertificates[0]
		_, cliErr = c.Read(make([]byte, 1))
	}
	_ = c.Close()
	return <-done, cliErr, seen
}

func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// certOnly presents src's certificate without checking the server: the
// server's check alone decides.
func certOnly(src *Source) *tls.Config {
	//nolint:gosec // the test looks at the server's verdict only
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{src.current().cert}}
}

func TestMutualTLS(t *testing.T) {
	s := newSet(t)
	srv := load(t, s.node(t, CertRequest{NodeID: "n1"}))
	good := load(t, s.node(t, CertRequest{NodeID: "n2"}))
	other := newSet(t) // another CA
	foreign := load(t, other.node(t, CertRequest{NodeID: "n3"}))
	wrongName := load(t, s.node(t, CertRequest{NodeID: "n4", ServerName: "admin.floe"}))
	anyCert := tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // a client without certificate

	tests := []struct {
		name    string
		client  *tls.Config
		srvErr  error  // want errors.Is on the server's error
		srvText string // or a substring of it
	}{
		{"same CA and name", good.ClientConfig(), nil, ""},
		{"no client certificate", &anyCert, ErrNoPeerCert, ""},
		{"certificate of another CA", certOnly(foreign), ErrPeerCert, ""},
		{"same CA without the server name", certOnly(wrongName), ErrPeerCert, ""},
		{"TLS 1.1", func() *tls.Config {
			c := certOnly(good)
			c.MinVersion, c.MaxVersion = tls.VersionTLS10, tls.VersionTLS11 //nolint:gosec // what the server must refuse
			return c
		}(), nil, "unsupported versions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srvErr, _, _ := handshake(t, srv.ServerConfig(), tt.client)
			switch {
			case tt.srvErr == nil && tt.srvText == "":
				if srvErr != nil {
					t.Fatalf("refused: %v", srvErr)
				}
			case tt.srvErr != nil && !errors.Is(srvErr, tt.srvErr):
				t.Fatalf("server error %v, want %v", srvErr, tt.srvErr)
			case tt.srvText != "" && (srvErr == nil || !strings.Contains(srvErr.Error(), tt.srvText)):
				t.Fatalf("server error %v, want one with %q", srvErr, tt.srvText)
			}
		})
	}
	// The dialer checks the server too: a server of another CA, or one
	// without the server name, is refused by the client.
	for name, bad := range map[string]*Source{"another CA": foreign, "another name": wrongName} {
		if _, cliErr, _ := handshake(t, bad.ServerConfig(), good.ClientConfig()); !errors.Is(cliErr, ErrPeerCert) {
			t.Errorf("client dialing a server of %s: %v, want %v", name, cliErr, ErrPeerCert)
		}
	}
}

// TestRotationWithoutRestart: new files (a new CA added to the bundle and a
// certificate it signs) are used from the next handshake on; files that do
// not load yet (a key still being written) keep the old ones.
func TestRotationWithoutRestart(t *testing.T) {
	s := newSet(t)
	f := s.node(t, CertRequest{NodeID: "n1"})
	srv := load(t, f)
	peer := load(t, s.node(t, CertRequest{NodeID: "n2"}))
	_, err, before := handshake(t, srv.ServerConfig(), peer.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}

	// A key that does not match the certificate: the old pair stays.
	next := newSet(t)
	np, err := NewCert(next.ca, CertRequest{NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, f.CertFile, np.Cert, time.Second)
	if _, err, seen := handshake(t, srv.ServerConfig(), peer.ClientConfig()); err != nil || seen.SerialNumber.Cmp(before.SerialNumber) != 0 {
		t.Fatalf("half-written rotation: err %v, serial %v, want the old %v", err, seen.SerialNumber, before.SerialNumber)
	}
	// The key and both CAs in the bundle on both nodes: the new certificate
	// is served and accepted, without reloading anything by hand.
	writeFile(t, f.KeyFile, np.Key, 2*time.Second)
	bundle := append(append([]byte{}, s.ca.Cert...), next.ca.Cert...)
	writeFile(t, f.CAFile, bundle, 2*time.Second) // shared by both sources here
	srvErr, cliErr, seen := handshake(t, srv.ServerConfig(), peer.ClientConfig())
	if srvErr != nil || cliErr != nil {
		t.Fatalf("after rotation: server %v, client %v", srvErr, cliErr)
	}
	if seen.SerialNumber.Cmp(before.SerialNumber) == 0 || seen.Issuer.CommonName != certCN(t, next.ca.Cert) {
		t.Fatalf("after rotation the server still presents serial %v of %q", seen.SerialNumber, seen.Issuer.CommonName)
	}
}

// writeFile replaces a file, moving its time on so that a filesystem with
// coarse timestamps still sees a change.
func writeFile(t *testing.T, path string, b []byte, later time.Duration) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(later)
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func certCN(t *testing.T, p []byte) string {
	t.Helper()
	b, _ := pem.Decode(p)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c.Subject.CommonName
}

func TestNewCert(t *testing.T) {
	s := newSet(t)
	p, err := NewCert(s.ca, CertRequest{NodeID: "n7", DNSNames: []string{"floe-1.internal"}, IPs: []net.IP{net.ParseIP("10.0.0.7")}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(p.Cert)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{DefaultServerName, "n7", "localhost", "floe-1.internal", "10.0.0.7", "127.0.0.1"} {
		if err := c.VerifyHostname(name); err != nil {
			t.Errorf("SAN %s missing: %v", name, err)
		}
	}
	if c.NotAfter.Sub(c.NotBefore) < 364*24*time.Hour {
		t.Errorf("validity %v, want about a year", c.NotAfter.Sub(c.NotBefore))
	}
	if _, _, err := p.WriteFiles(s.dir, "n7"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.WriteFiles(s.dir, "n7"); !errors.Is(err, ErrExists) {
		t.Fatalf("second write: %v, want %v", err, ErrExists)
	}
	if _, err := NewCert(PEMPair{Cert: s.ca.Cert, Key: p.Key}, CertRequest{NodeID: "x"}); err == nil {
		t.Fatal("signed with a key that is not the CA's")
	}
}
