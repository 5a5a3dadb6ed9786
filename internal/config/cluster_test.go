package config

import (
	"strings"
	"testing"
)

// TestInternalPortsNeedTLS: a node whose rpc or raft port listens beyond
// loopback starts only with cluster.tls or an explicit
// cluster.insecure_internal; the error names the field and the way out.
func TestInternalPortsNeedTLS(t *testing.T) {
	const tlsFiles = "FLOE_CLUSTER_TLS_CA_FILE=/t/ca.pem FLOE_CLUSTER_TLS_CERT_FILE=/t/n1.pem FLOE_CLUSTER_TLS_KEY_FILE=/t/n1-key.pem"
	// The PEM's content is checked by cluster/tlsconf at the node's start;
	// here only that the form is whole.
	const tlsPEM = "FLOE_CLUSTER_TLS_CA_PEM=ca FLOE_CLUSTER_TLS_CERT_PEM=cert FLOE_CLUSTER_TLS_KEY_PEM=key"
	for _, c := range []struct {
		name string
		env  string
		want []string // substrings of the error; none: accepted
	}{
		{"defaults on loopback", "", nil},
		{"localhost", "FLOE_NODE_RAFT_ADDR=localhost:7420", nil},
		{"ipv6 loopback", "FLOE_NODE_RPC_ADDR=[::1]:7422", nil},
		{"all interfaces", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422", []string{"node.rpc_addr", "0.0.0.0:7422", "cluster.tls", "cluster.insecure_internal"}},
		{"empty host", "FLOE_NODE_RAFT_ADDR=:7420", []string{"node.raft_addr", "not a loopback address"}},
		{"a host name", "FLOE_NODE_RAFT_ADDR=floe-1.internal:7420", []string{"node.raft_addr"}},
		{"insecure_internal", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422 FLOE_CLUSTER_INSECURE_INTERNAL=true", nil},
		{"with tls", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422 FLOE_NODE_RAFT_ADDR=0.0.0.0:7420 FLOE_NODE_ADVERTISE_ADDR=10.0.0.1:7420 " + tlsFiles, nil},
		{"tls without key", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422 FLOE_CLUSTER_TLS_CA_FILE=/t/ca.pem FLOE_CLUSTER_TLS_CERT_FILE=/t/n1.pem", []string{"cluster.tls.key_file: must be set"}},
		{"with inline pem", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422 " + tlsPEM, nil},
		{"inline pem without key", "FLOE_NODE_RPC_ADDR=0.0.0.0:7422 FLOE_CLUSTER_TLS_CA_PEM=ca FLOE_CLUSTER_TLS_CERT_PEM=cert",
			[]string{"cluster.tls.key_pem: must be set", "ca_pem, cert_pem and key_pem"}},
		{"files and pem", tlsFiles + " FLOE_CLUSTER_TLS_KEY_PEM=key", []string{"cluster.tls", "not both"}},
		{"bad server name", tlsFiles + " FLOE_CLUSTER_TLS_SERVER_NAME=a_b..c", []string{"cluster.tls.server_name"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(write(t, validYAML), strings.Fields(c.env))
			if len(c.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !cfg.Cluster.TLS.VerifyIncoming {
					t.Fatal("verify_incoming is off by default")
				}
				if strings.Contains(c.env, "_PEM=") && (cfg.Cluster.TLS.KeyPEM != "key" || strings.Contains(cfg.String(), "key_pem:key") ||
					strings.Contains(cfg.String(), "KeyPEM:key")) {
					t.Fatalf("key_pem %q, printed as %s", cfg.Cluster.TLS.KeyPEM, cfg.String())
				}
				return
			}
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Fatalf("Load = %v, want an error with %q", err, w)
				}
			}
		})
	}
}
