package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/cluster/tlsconf"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/wait"
)

func runTLS(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := tlsCmd()
	var out bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&out)
	c.SetArgs(args)
	err := c.Execute()
	return out.String(), err
}

// TestTLSCommandsMakeAWorkingSet: floe tls ca create and floe tls cert
// create make files a node's configuration accepts and a three-node group
// forms over; a second run does not overwrite them.
func TestTLSCommandsMakeAWorkingSet(t *testing.T) {
	dir := t.TempDir()
	if out, err := runTLS(t, "ca", "create", "--dir", dir); err != nil {
		t.Fatalf("ca create: %v\n%s", err, out)
	}
	ca, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca-key.pem")
	ids := []string{"n1", "n2", "n3"}
	for _, id := range ids {
		if out, err := runTLS(t, "cert", "create", "--node", id, "--dir", dir, "--ca", ca, "--key", key, "--additional-ipaddress", "10.1.2.3"); err != nil {
			t.Fatalf("cert create %s: %v\n%s", id, err, out)
		}
	}
	if _, err := runTLS(t, "cert", "create", "--node", "n1", "--dir", dir, "--ca", ca, "--key", key); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("second cert create for n1: %v, want a refusal to overwrite", err)
	}
	if _, err := runTLS(t, "cert", "create", "--node", "n4", "--dir", dir, "--ca", ca, "--key", key, "--additional-ipaddress", "not-an-ip"); err == nil {
		t.Fatal("an invalid --additional-ipaddress was accepted")
	}
	if fi, err := os.Stat(filepath.Join(dir, "n1-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}

	// The configuration of a node bound to every interface accepts them.
	cfgPath := filepath.Join(dir, "floe.yaml")
	if err := os.WriteFile(cfgPath, []byte("node: {id: n1, data_dir: "+dir+"}\nkafka: {bootstrap_servers: [127.0.0.1:9092]}\nwarehouse: {location: file:///tmp/wh}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(cfgPath, []string{
		"FLOE_NODE_RPC_ADDR=0.0.0.0:7422", "FLOE_NODE_RAFT_ADDR=0.0.0.0:7420", "FLOE_NODE_ADVERTISE_ADDR=10.1.2.3:7420",
		"FLOE_CLUSTER_TLS_CA_FILE=" + ca, "FLOE_CLUSTER_TLS_CERT_FILE=" + filepath.Join(dir, "n1.pem"),
		"FLOE_CLUSTER_TLS_KEY_FILE=" + filepath.Join(dir, "n1-key.pem"),
	}); err != nil {
		t.Fatalf("config with the generated files: %v", err)
	}

	nodes := openTLSGroup(t, dir, ids)
	wait.For(t, 30*time.Second, "three voters under one leader", func() bool {
		for _, n := range nodes {
			if n.IsLeader() {
				v := 0
				for _, m := range n.Members() {
					if m.Voter {
						v++
					}
				}
				return v == 3
			}
		}
		return false
	})
}

func openTLSGroup(t *testing.T, dir string, ids []string) []*raftnode.Node {
	t.Helper()
	rpc, rft := map[string]string{}, map[string]string{}
	var join []string
	for _, id := range ids {
		rpc[id], rft[id] = loopbackAddr(t), loopbackAddr(t)
		join = append(join, rpc[id])
	}
	var nodes []*raftnode.Node
	for _, id := range ids {
		src, err := tlsconf.Load(tlsconf.Files{
			CAFile: filepath.Join(dir, "ca.pem"), CertFile: filepath.Join(dir, id+".pem"), KeyFile: filepath.Join(dir, id+"-key.pem"), VerifyIncoming: true,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := raftnode.Open(raftnode.NodeConfig{
			ID: id, DataDir: filepath.Join(dir, "data-"+id), RaftAddr: rft[id], RPCAddr: rpc[id], BootstrapExpect: len(ids), Join: join,
			TLS: src, NoSync: true, Version: "test",
		})
		if err != nil {
			t.Fatalf("opening %s: %v", id, err)
		}
		t.Cleanup(func() { n.Close() })
		nodes = append(nodes, n)
	}
	return nodes
}

func loopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestServeRefusesOpenInternalPortsWithoutTLS: floe serve with an internal
// port bound to every interface and no cluster.tls exits with the
// configuration code and says which field and what to do.
func TestServeRefusesOpenInternalPortsWithoutTLS(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "floe.yaml")
	body := "node: {id: n1, data_dir: " + dir + ", raft_addr: 0.0.0.0:0, rpc_addr: 127.0.0.1:0, admin_addr: 127.0.0.1:0}\n" +
		"kafka: {bootstrap_servers: [127.0.0.1:9092]}\nwarehouse: {location: file://" + dir + "/wh}\n"
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c := serveCmd()
	c.SetArgs([]string{"--config", p})
	c.SetOut(&bytes.Buffer{})
	c.SetErr(&bytes.Buffer{})
	err := c.Execute()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitConfig {
		t.Fatalf("serve = %v, want a configuration error", err)
	}
	for _, w := range []string{"node.raft_addr", "not a loopback address", "cluster.tls", "cluster.insecure_internal"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}
