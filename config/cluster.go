package config

import (
	"net"
	"regexp"
)

// Cluster says how nodes form and run the Raft group.
type Cluster struct {
	// BootstrapExpect: a fresh node forms a new group only together with
	// this many fresh nodes found through Join. 1: a single node forms it at
	// once. 0: never form one, only join.
	BootstrapExpect int `yaml:"bootstrap_expect"`
	// Join lists peers' rpc addresses; a DNS name standing for several
	// tasks (ECS service discovery) counts for all its addresses.
	Join []string `yaml:"join"`
	// MaxVoters caps the Raft voters (odd, at most 7); other nodes are
	// non-voters, promoted when a voter fails.
	MaxVoters int `yaml:"max_voters"`
	// FailureTimeout: a node that does not answer the leader's health
	// checks this long loses its partitions and committer roles.
	FailureTimeout Duration `yaml:"failure_timeout"`
	// DeadServerTimeout: a node unreachable this long is removed from the
	// group.
	DeadServerTimeout Duration `yaml:"dead_server_timeout"`
	// DrainTimeout bounds the graceful leave on SIGTERM; keep it at or
	// below the ECS task's stopTimeout (at most 120 s).
	DrainTimeout Duration `yaml:"drain_timeout"`
	// BackupInterval: how often the leader writes the replicated state to
	// the warehouse for recovery from the loss of every node.
	BackupInterval Duration `yaml:"backup_interval"`
	// TLS puts the internal ports (node.rpc_addr, node.raft_addr) under
	// mutual TLS.
	TLS ClusterTLS `yaml:"tls"`
	// InsecureInternal lets a node listen on a non-loopback internal
	// address without cluster.tls: whoever reaches those ports can then
	// apply any command and read the whole replicated state.
	InsecureInternal bool `yaml:"insecure_internal"`
}

// ClusterTLS names the PEM files of the internal ports' mutual TLS (floe tls
// ca create and floe tls cert create make them). The files are re-read when
// they change, so certificates rotate without a restart.
type ClusterTLS struct {
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// VerifyIncoming (default true): a peer must present a certificate
	// signed by the CA that carries ServerName.
	VerifyIncoming bool `yaml:"verify_incoming"`
	// ServerName is the SAN every node's certificate carries and every
	// node expects of its peers (default server.floe).
	ServerName string `yaml:"server_name"`
}

// Enabled reports whether any of the files is set.
func (t ClusterTLS) Enabled() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// validateInternalTLS checks cluster.tls, and refuses a non-loopback
// internal address without it unless cluster.insecure_internal says so.
func (c *Config) validateInternalTLS(bad func(field, format string, args ...any)) {
	t := c.Cluster.TLS
	if t.Enabled() {
		for _, f := range []struct{ field, v string }{
			{"cluster.tls.ca_file", t.CAFile}, {"cluster.tls.cert_file", t.CertFile}, {"cluster.tls.key_file", t.KeyFile},
		} {
			if f.v == "" {
				bad(f.field, "must be set: cluster.tls needs ca_file, cert_file and key_file together")
			}
		}
		if t.ServerName != "" && !dnsNameRe.MatchString(t.ServerName) {
			bad("cluster.tls.server_name", "%q is not a DNS name", t.ServerName)
		}
		return
	}
	if c.Cluster.InsecureInternal {
		return
	}
	for _, a := range []struct{ field, v string }{
		{"node.raft_addr", c.Node.RaftAddr}, {"node.rpc_addr", c.Node.RPCAddr},
	} {
		if a.v != "" && !loopback(a.v) {
			bad(a.field, "%q is not a loopback address and cluster.tls is not set: anyone who reaches it could apply any command "+
				"and read the whole replicated state; set cluster.tls (ca_file, cert_file, key_file: floe tls ca create, "+
				"floe tls cert create) or, on a network you trust, cluster.insecure_internal: true", a.v)
		}
	}
}

// dnsNameRe: labels of letters, digits and '-', separated by dots.
var dnsNameRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// loopback reports whether a listen address binds only the loopback
// interface: an empty host or 0.0.0.0 binds every interface, and a name
// other than localhost may resolve anywhere.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
