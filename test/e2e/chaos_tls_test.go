//go:build long

package e2e

// The chaos fleet under mutual TLS: a CA, one certificate per node (SANs
// server.floe, the node id, 127.0.0.1), and two faults for the schedule:
// every node's certificate re-issued in place, and the CA rotated as
// docs/security.md says an operator does it. The nodes re-read the files at
// their next handshake; a fleet that stops talking fails the settle after
// the step.

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/testing/testcerts"
)

type fleetTLS struct {
	t   testing.TB
	mu  sync.Mutex
	ca  *testcerts.Pair   // signs the node certificates
	cas []*testcerts.Pair // in every node's ca_file
}

// enableTLS puts every node started from now on under mutual TLS.
func (f *fleet) enableTLS() *fleetTLS {
	ca := testcerts.CA(f.t)
	f.tls = &fleetTLS{t: f.t, ca: ca, cas: []*testcerts.Pair{ca}}
	return f.tls
}

func tlsDir(n *fleetNode) string { return filepath.Join(n.dir, "tls") }

// configFor writes n's CA bundle and certificate (if missing) and returns
// its cluster.tls section.
func (ft *fleetTLS) configFor(n *fleetNode) map[string]any {
	dir := tlsDir(n)
	if _, err := os.Stat(filepath.Join(dir, "node.pem")); err != nil {
		ft.write(n)
	}
	return map[string]any{"ca_file": filepath.Join(dir, "ca.pem"),
		"cert_file": filepath.Join(dir, "node.pem"), "key_file": filepath.Join(dir, "node-key.pem")}
}

// write writes n's CA bundle and a certificate for n signed by the current CA.
func (ft *fleetTLS) write(n *fleetNode) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := ft.t
	dir := tlsDir(n)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ft.writeBundle(dir)
	leaf := testcerts.New(t, ft.ca, &x509.Certificate{Subject: pkix.Name{CommonName: n.id},
		DNSNames: []string{"server.floe", n.id}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	// Certificate, then key, as a careless operator would: between the
	// two the files disagree and the node keeps its previous pair.
	leaf.Files(t, dir, "node")
}

// writeBundle writes the CAs every node trusts; called with ft.mu held.
func (ft *fleetTLS) writeBundle(dir string) {
	var b bytes.Buffer
	for _, ca := range ft.cas {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: ca.DER})
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), b.Bytes(), 0o600); err != nil {
		ft.t.Fatal(err)
	}
}

// reissue gives every node (running or not) a new certificate from the
// current CA; why names the step in the event log.
func (ft *fleetTLS) reissue(f *fleet, why string) {
	f.mu.Lock()
	nodes := make([]*fleetNode, 0, len(f.nodes))
	for _, n := range f.nodes {
		nodes = append(nodes, n)
	}
	f.mu.Unlock()
	for _, n := range nodes {
		ft.write(n)
	}
	f.event("re-issued %d node certificates%s", len(nodes), why)
}

// rotateCA rotates the CA without a restart: the new CA joins every
// bundle, the certificates are re-issued from it, the old CA leaves the
// bundles. The fleet must settle after each phase.
func (ft *fleetTLS) rotateCA(f *fleet) {
	next := testcerts.CA(f.t)
	ft.mu.Lock()
	ft.cas = append(ft.cas, next)
	ft.mu.Unlock()
	ft.rewriteBundles(f)
	f.event("CA rotation 1/3: the new CA is in every bundle")
	f.settle(90 * time.Second)
	ft.mu.Lock()
	ft.ca = next
	ft.mu.Unlock()
	ft.reissue(f, " (CA rotation 2/3: from the new CA)")
	f.settle(90 * time.Second)
	ft.mu.Lock()
	ft.cas = []*testcerts.Pair{next}
	ft.mu.Unlock()
	ft.rewriteBundles(f)
	f.event("CA rotation 3/3: the old CA left every bundle")
}

func (ft *fleetTLS) rewriteBundles(f *fleet) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ft.mu.Lock()
	defer ft.mu.Unlock()
	for _, n := range f.nodes {
		ft.writeBundle(tlsDir(n))
	}
}

// checkEnforced proves the internal ports are under mutual TLS: a client
// without a certificate gets no session on a node's rpc port, and, after
// certificates were re-issued, some node logged reloading them.
func (ft *fleetTLS) checkEnforced(f *fleet, rotated bool) {
	f.t.Helper()
	run := f.running()
	if len(run) == 0 {
		f.t.Fatal("no running node to check TLS on")
	}
	// A client with a certificate of the cluster's CA and its server name
	// gets a session: the port speaks TLS with the current CA.
	ft.mu.Lock()
	client := testcerts.New(f.t, ft.ca, &x509.Certificate{Subject: pkix.Name{CommonName: "checker"}, DNSNames: []string{"server.floe"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	roots := ft.ca.Pool()
	ft.mu.Unlock()
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	good, err := tls.DialWithDialer(dialer, "tcp", run[0].rpcAddr, &tls.Config{Certificates: []tls.Certificate{client.TLS()},
		RootCAs: roots, ServerName: "server.floe", MinVersion: tls.VersionTLS12})
	if err != nil {
		f.t.Errorf("%s's rpc port refused a certificate of the current CA: %v", run[0].id, err)
	} else {
		good.Close()
	}
	// Without a certificate: no session.
	conn, err := tls.DialWithDialer(dialer, "tcp", run[0].rpcAddr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the check is that the server refuses us
	if err == nil {
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
	}
	if err == nil {
		f.t.Errorf("%s's rpc port answered a client without a certificate", run[0].id)
	}
	if !rotated {
		return
	}
	for _, n := range run {
		if strings.Contains(f.incarnationLog(n), "internal tls certificates reloaded") {
			return
		}
	}
	f.t.Error("certificates were re-issued but no running node logged reloading them")
}
