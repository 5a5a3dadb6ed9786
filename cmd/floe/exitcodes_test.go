package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/floe-io/floe/cluster/tlsconf"
)

// TestExitCodes: every usage error (a flag that does not exist or parse,
// an argument a command does not take, an unknown command) and every
// configuration floe serve refuses (fields, YAML shapes, a TLS key that is
// not its certificate's, wherever the pair is configured) exits 2, as
// README's exit-code table says; they used to exit 1, being cobra's plain
// errors or errors found while the node starts. The message says what to
// do.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	cert, wrongKey := mismatchedPair(t, dir)
	nodeOnly := "node: {id: n1, data_dir: @DATA@, raft_addr: 127.0.0.1:0, rpc_addr: 127.0.0.1:0, admin_addr: 127.0.0.1:0}\n"
	base := nodeOnly + "kafka: {bootstrap_servers: [127.0.0.1:9]}\n"
	wh := "warehouse: {location: file://" + dir + "/wh}\n"
	pair := "{cert_file: " + cert + ", key_file: " + wrongKey + "}"
	conf := func(name, body string) string {
		p := filepath.Join(dir, name+".yaml")
		body = strings.ReplaceAll(body, "@DATA@", filepath.Join(dir, name+"-data")) // a node of its own
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"version", []string{"version"}, exitOK, nil},
		{"unknown flag", []string{"serve", "--confg", "floe.yaml"}, exitUsage, []string{"unknown flag: --confg", "see floe serve --help"}},
		{"flag without its value", []string{"health", "--addr"}, exitUsage, []string{"flag needs an argument"}},
		{"bad flag value", []string{"serve", "--bootstrap-expect", "three"}, exitUsage, []string{"--bootstrap-expect"}},
		{"config file as an argument", []string{"serve", "floe.yaml"}, exitUsage, []string{"takes no arguments", "--config floe.yaml"}},
		{"argument to health", []string{"health", "now"}, exitUsage, []string{"floe health takes no arguments"}},
		{"unknown command", []string{"srve"}, exitUsage, []string{`unknown command "srve"`, "did you mean serve?"}},
		{"unknown subcommand", []string{"tls", "certs"}, exitUsage, []string{`unknown command "certs" for "floe tls"`, "did you mean cert?"}},
		{"required flag", []string{"tls", "cert", "create", "--dir", dir}, exitUsage, []string{"--node is required"}},
		{"ctl usage", []string{"ctl", "tables", "resume"}, exitUsage, []string{"needs 1 argument"}},
		{"status flag", []string{"status", "--bogus"}, exitUsage, []string{"unknown flag: --bogus"}},
		{"no warehouse.location", []string{"serve", "--config", conf("nowh", base)}, exitConfig, []string{"warehouse.location: not set", "s3://"}},
		{"YAML shape", []string{"serve", "--config", conf("shape", wh+"kafka:\n  bootstrap_servers: 127.0.0.1:9092\n")}, exitConfig,
			[]string{"line 3: kafka.bootstrap_servers: expected a list of strings", "[127.0.0.1:9092]"}},
		{"cluster.tls key of another certificate", []string{"serve", "--config", conf("ctls", base+wh+"cluster: {tls: {ca_file: "+dir+"/ca.pem, cert_file: "+cert+", key_file: "+wrongKey+"}}\n")},
			exitConfig, []string{"cluster.tls", "private key does not match public key"}},
		{"admin.tls key of another certificate", []string{"serve", "--config", conf("atls", base+wh+"admin: {tls: "+pair+"}\n")},
			exitConfig, []string{"admin.tls.cert_file", "private key does not match public key"}},
		{"kafka.tls key of another certificate", []string{"serve", "--config", conf("ktls", nodeOnly+wh+"kafka: {bootstrap_servers: [127.0.0.1:9], tls: {enabled: true, cert_file: "+cert+", key_file: "+wrongKey+"}}\n")},
			exitConfig, []string{"kafka.tls.cert_file", "private key does not match public key"}},
		{"catalogs.server.tls key of another certificate", []string{"serve", "--config", conf("rtls", base+wh+"catalogs: {server: {enabled: true, addr: 127.0.0.1:0, tls: "+pair+"}}\n")},
			exitConfig, []string{"catalogs.server.tls.cert_file", "private key does not match public key"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && strings.Contains(c.name, "tls") {
				t.Skip("starts a node")
			}
			var stderr bytes.Buffer
			code := run(c.args, &stderr)
			if code != c.code {
				t.Fatalf("floe %s exits %d, want %d:\n%s", strings.Join(c.args, " "), code, c.code, stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("floe %s: stderr does not say %q:\n%s", strings.Join(c.args, " "), w, stderr.String())
				}
			}
		})
	}
}

// TestExitCodeOfTheProcess: the code reaches the process (main), not only
// run's result.
func TestExitCodeOfTheProcess(t *testing.T) {
	out, err := floeCommand("serve", "--confg", "floe.yaml").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || !strings.Contains(string(out), "unknown flag: --confg") {
		t.Fatalf("floe serve --confg: %v, want exit %d:\n%s", err, exitUsage, out)
	}
}

// mismatchedPair writes a CA (ca.pem) and two node certificates, and
// returns the first's certificate and the second's key.
func mismatchedPair(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	ca, err := tlsconf.NewCA("test CA", 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tlsconf.NewCert(ca, tlsconf.CertRequest{NodeID: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := tlsconf.NewCert(ca, tlsconf.CertRequest{NodeID: "n2"})
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "n1.pem"), filepath.Join(dir, "n2-key.pem")
	for p, data := range map[string][]byte{filepath.Join(dir, "ca.pem"): ca.Cert, cert: a.Cert, key: b.Key} {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}
