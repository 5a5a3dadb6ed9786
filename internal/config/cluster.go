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

// ClusterTLS holds the internal ports' mutual TLS material (floe tls ca
// create and floe tls cert create make it) in one of two forms. Files
// (ca_file, cert_file, key_file) are re-read when they change, so
// certificates rotate without a restart. Inline PEM (ca_pem, cert_pem,
// key_pem; FLOE_CLUSTER_TLS_CA_PEM and so on, which is how ECS injects a
// Secrets Manager secret into an image without a shell) is read once:
// rotating it is a rolling restart.
type ClusterTLS struct {
	CAFile   string `yaml:"ca_file"`
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// CAPEM is the CA certificate(s), PEM; CertPEM the node certificate
	// (and any intermediates); KeyPEM its private key, a secret: redacted
	// wherever the configuration is printed.
	CAPEM   string `yaml:"ca_pem"`
	CertPEM string `yaml:"cert_pem"`
	KeyPEM  string `yaml:"key_pem"`
	// VerifyIncoming (default true): a peer must present a certificate
	// signed by the CA that carries ServerName.
	VerifyIncoming bool `yaml:"verify_incoming"`
	// ServerName is the SAN every node's certificate carries and every
	// node expects of its peers (default server.floe).
	ServerName string `yaml:"server_name"`
}

// Enabled reports whether any of the files or PEM is set.
func (t ClusterTLS) Enabled() bool { return t.filesSet() || t.Inline() }

// Inline reports whether the PEM form is used.
func (t ClusterTLS) Inline() bool { return t.CAPEM != "" || t.CertPEM != "" || t.KeyPEM != "" }

func (t ClusterTLS) filesSet() bool { return t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// validateInternalTLS checks cluster.tls, and refuses a non-loopback
// internal address without it unless cluster.insecure_internal says so.
// The PEM content is checked where it is loaded (cluster/tlsconf), at the
// start of the node, naming the field.
func (c *Config) validateInternalTLS(bad func(field, format string, args ...any)) {
	t := c.Cluster.TLS
	if t.Enabled() {
		c.validateTLSForm(bad)
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
				"and read the whole replicated state; set cluster.tls (ca_file, cert_file, key_file, or ca_pem, cert_pem, key_pem: "+
				"floe tls ca create, floe tls cert create) or, on a network you trust, cluster.insecure_internal: true", a.v)
		}
	}
}

// validateTLSForm: one form, complete.
func (c *Config) validateTLSForm(bad func(field, format string, args ...any)) {
	t := c.Cluster.TLS
	if t.filesSet() && t.Inline() {
		bad("cluster.tls", "set the files (ca_file, cert_file, key_file) or the PEM (ca_pem, cert_pem, key_pem), not both")
		return
	}
	fields := []struct{ field, v string }{
		{"cluster.tls.ca_file", t.CAFile}, {"cluster.tls.cert_file", t.CertFile}, {"cluster.tls.key_file", t.KeyFile},
	}
	if t.Inline() {
		fields = []struct{ field, v string }{
			{"cluster.tls.ca_pem", t.CAPEM}, {"cluster.tls.cert_pem", t.CertPEM}, {"cluster.tls.key_pem", t.KeyPEM},
		}
	}
	for _, f := range fields {
		if f.v == "" {
			bad(f.field, "must be set: cluster.tls needs %s, %s and %s together",
				fields[0].field[len("cluster.tls."):], fields[1].field[len("cluster.tls."):], fields[2].field[len("cluster.tls."):])
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
