package raftnode

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/floe-io/floe/cluster/tlsconf"
	"github.com/floe-io/floe/internal/testing/logbuf"
	"github.com/floe-io/floe/internal/testing/wait"
)

// tlsCA makes a CA in dir and returns a function that makes a node's TLS
// source signed by it.
func tlsCA(t *testing.T, dir string) func(id string) *tlsconf.Source {
	t.Helper()
	ca, err := tlsconf.NewCA("test ca", 0)
	if err != nil {
		t.Fatal(err)
	}
	caFile, _, err := ca.WriteFiles(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	return func(id string) *tlsconf.Source {
		p, err := tlsconf.NewCert(ca, tlsconf.CertRequest{NodeID: id})
		if err != nil {
			t.Fatal(err)
		}
		cf, kf, err := p.WriteFiles(dir, id)
		if err != nil {
			t.Fatal(err)
		}
		src, err := tlsconf.Load(tlsconf.Files{CAFile: caFile, CertFile: cf, KeyFile: kf, VerifyIncoming: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
}

// tlsGroup opens ids as a group over real TCP with internal TLS on.
func tlsGroup(t *testing.T, ids []string, src func(string) *tlsconf.Source, logs *logbuf.Buffer) map[string]*Node {
	t.Helper()
	dir := t.TempDir()
	rpc, rft := map[string]string{}, map[string]string{}
	var join []string
	for _, id := range ids {
		rpc[id], rft[id] = freeAddr(t), freeAddr(t)
		join = append(join, rpc[id])
	}
	nodes := map[string]*Node{}
	for _, id := range ids {
		n, err := Open(NodeConfig{
			ID: id, DataDir: filepath.Join(dir, id), RaftAddr: rft[id], RPCAddr: rpc[id], BootstrapExpect: len(ids), Join: join,
			TLS: src(id), Raft: fastRaft, NoSync: true, FailureTimeout: 2 * time.Second, DeadServerTimeout: time.Hour,
			Version: "test", ApplyTimeout: 5 * time.Second,
			Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			t.Fatalf("opening %s: %v", id, err)
		}
		nodes[id] = n
		t.Cleanup(func() { n.Close() })
	}
	return nodes
}

func tlsLeader(t *testing.T, nodes map[string]*Node) *Node {
	t.Helper()
	var l *Node
	wait.For(t, 20*time.Second, "a leader", func() bool {
		for _, n := range nodes {
			if n.IsLeader() {
				l = n
				return true
			}
		}
		return false
	})
	return l
}

// TestInternalTLSClusterSurvivesLeaderLoss: three nodes form a group over
// mutual TLS on both internal ports, forward a command, and elect a new
// leader that accepts commands once the old one is stopped.
func TestInternalTLSClusterSurvivesLeaderLoss(t *testing.T) {
	logs := &logbuf.Buffer{}
	nodes := tlsGroup(t, []string{"a", "b", "c"}, tlsCA(t, t.TempDir()), logs)
	l := tlsLeader(t, nodes)
	wait.For(t, 20*time.Second, "three voters", func() bool { v, _ := voters(l); return v == 3 })
	var f *Node
	for _, n := range nodes {
		if n != l {
			f = n
		}
	}
	mustApply(t, f, CreateNamespace{Parts: []string{"before"}}) // forwarded over the RPC
	l.Close()
	delete(nodes, l.ID())
	nl := tlsLeader(t, nodes)
	mustApply(t, nl, CreateNamespace{Parts: []string{"after"}})
	// Both survivors catch up through the new leader (retried: under load
	// a fresh leadership can still move once).
	for _, n := range nodes {
		wait.For(t, 20*time.Second, n.ID()+" synced with the leader", func() bool { return n.Sync(context.Background()) == nil })
	}
	if s := logs.String(); strings.Contains(s, "connection refused\" peer") {
		t.Fatalf("a refused internal connection between members:\n%s", s)
	}
}

// TestInternalTLSRefusesWithoutClientCert: a caller without a certificate
// of the cluster CA carrying the server name reaches neither the internal
// RPC nor the Raft port, and each refusal is logged with its address.
func TestInternalTLSRefusesWithoutClientCert(t *testing.T) {
	dir := t.TempDir()
	src := tlsCA(t, dir)
	foreign := tlsCA(t, t.TempDir())("x")
	logs := &logbuf.Buffer{}
	n := tlsGroup(t, []string{"a"}, src, logs)["a"]
	tlsLeader(t, map[string]*Node{"a": n})
	foreignCert := foreignPair(t, foreign)

	//nolint:gosec // callers that do not check the server: only the node's verdict counts
	rpcCallers := []struct {
		name  string
		creds credentials.TransportCredentials
	}{
		{"plaintext", insecure.NewCredentials()},
		{"tls without certificate", credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})},
		{"certificate of another CA", credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{foreignCert}})},
	}
	for _, c := range rpcCallers {
		t.Run("rpc "+c.name, func(t *testing.T) {
			before := strings.Count(logs.String(), `internal rpc connection refused" peer=127.0.0.1:`)
			cl := &rpcClients{creds: c.creds}
			defer cl.close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var out InfoResponse
			if err := cl.call(ctx, n.RPCAddr(), "Info", &InfoRequest{}, &out); err == nil {
				t.Fatalf("Info answered %+v", out)
			}
			wait.For(t, 5*time.Second, "the refusal logged with the peer", func() bool {
				return strings.Count(logs.String(), `internal rpc connection refused" peer=127.0.0.1:`) > before
			})
		})
	}
	// A member's own credentials do work: the refusals are not of everything.
	good := &rpcClients{creds: rpcClientCreds(src("b"))}
	defer good.close()
	var info InfoResponse
	if err := good.call(context.Background(), n.RPCAddr(), "Info", &InfoRequest{}, &info); err != nil || info.ID != "a" {
		t.Fatalf("Info with a member's certificate: %+v, %v", info, err)
	}

	raftCallers := map[string]*tls.Config{
		"tls without certificate":   {InsecureSkipVerify: true},                                               //nolint:gosec // as above
		"certificate of another CA": {InsecureSkipVerify: true, Certificates: []tls.Certificate{foreignCert}}, //nolint:gosec // as above
		"plaintext":                 nil,
	}
	for name, cfg := range raftCallers {
		t.Run("raft "+name, func(t *testing.T) {
			local := dialRaft(t, n.cfg.RaftAddr, cfg)
			wait.For(t, 5*time.Second, "the refusal logged with "+local, func() bool {
				for _, line := range strings.Split(logs.String(), "\n") {
					if strings.Contains(line, "raft connection refused") && strings.Contains(line, "peer="+local) {
						return true
					}
				}
				return false
			})
		})
	}
}

// dialRaft connects to a Raft port as cfg says (nil: plaintext), sends a
// byte of raft's protocol and expects the connection closed without an
// answer; it returns the caller's local address.
func dialRaft(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(10 * time.Second))
	c := raw
	if cfg != nil {
		c = tls.Client(raw, cfg)
	}
	// rpcAppendEntries and zeros (the handshake, if any, runs first): in
	// plaintext, enough for the node to see it is no TLS record.
	_, _ = c.Write(make([]byte, 16))
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the raft port answered %d bytes", n)
	}
	return raw.LocalAddr().String()
}

func foreignPair(t *testing.T, src *tlsconf.Source) tls.Certificate {
	t.Helper()
	var got *tls.Certificate
	cfg := src.ClientConfig()
	got, err := cfg.GetClientCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	return *got
}

// TestInternalTLSRotationWithoutRestart: a running node whose files are
// replaced (its certificate now from a new CA, the CA file a bundle of
// both) serves the new certificate to the next caller and accepts callers
// of the new CA, with no restart; its old peers still get in.
func TestInternalTLSRotationWithoutRestart(t *testing.T) {
	oldDir, newDir := t.TempDir(), t.TempDir()
	oldCA := tlsCA(t, oldDir)
	n := tlsGroup(t, []string{"a"}, oldCA, &logbuf.Buffer{})["a"]
	tlsLeader(t, map[string]*Node{"a": n})
	newCA := tlsCA(t, newDir)
	newPeer := newCA("b") // trusts the new CA only
	info := func(src *tlsconf.Source) error {
		cl := &rpcClients{creds: rpcClientCreds(src)}
		defer cl.close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var out InfoResponse
		return cl.call(ctx, n.RPCAddr(), "Info", &InfoRequest{}, &out)
	}
	if err := info(newPeer); err == nil {
		t.Fatal("a peer of the new CA got in before the rotation")
	}
	// Rotate a's files in place: certificate and key from the new CA (made
	// as newCA("a") would, into a's paths), the CA file a bundle.
	_ = newCA("a")
	bundle := append(readFile(t, filepath.Join(oldDir, "ca.pem")), readFile(t, filepath.Join(newDir, "ca.pem"))...)
	later := time.Now().Add(2 * time.Second)
	for dst, b := range map[string][]byte{
		filepath.Join(oldDir, "a.pem"):     readFile(t, filepath.Join(newDir, "a.pem")),
		filepath.Join(oldDir, "a-key.pem"): readFile(t, filepath.Join(newDir, "a-key.pem")),
		filepath.Join(oldDir, "ca.pem"):    bundle,
	} {
		writeAt(t, dst, b, later)
	}
	if err := info(newPeer); err != nil {
		t.Fatalf("a peer of the new CA after the rotation: %v", err)
	}
	if err := info(oldCA("c")); err != nil {
		t.Fatalf("a peer of the old CA after the rotation: %v", err)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeAt replaces a file and dates it at, so that a filesystem with
// coarse timestamps still shows the change.
func writeAt(t *testing.T, p string, b []byte, at time.Time) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}
