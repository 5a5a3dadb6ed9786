package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad loads arbitrary configuration files: Load never panics, and a
// file it refuses is refused with an error (a bad configuration stops
// start-up naming what is wrong, never a crash).
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"",
		"kafka:\n  bootstrap_servers: [localhost:9092]\ntables:\n  - topic: orders\n    namespace: db\n",
		"tables:\n  - topic_regex: 'orders-(.*)'\n    namespace: '{1}'\n    name: '{topic}'\n    max_nesting_depth: 300\n",
		"auth:\n  tokens: 'LONGENOUGHTOKEN_123456:superuser'\n",
		"node:\n  raft_addr: 0.0.0.0:7420\n",
		"a: &a [*a, *a]\n",
		"memory_budget: 1KiB\n",
		// Accepted ones (a warehouse.location is required), and type
		// errors for the explanation's walk (yamlerr.go).
		"warehouse: {location: file:///tmp/wh}\ntables:\n  - topic: orders\n    partition_by: [{column: _kafka_timestamp, transform: day}]\n",
		"warehouse: {location: s3://b/p, s3: {region: r}}\ncommit_interval: 5s\n",
		"kafka:\n  bootstrap_servers: 127.0.0.1:9092\n  tls: yes\ncommit_interval: [1]\nnamespaces: {a: {location: [x]}}\n",
		"kafka: {bootstrap_server: [a:1]}\ntables: [{topic: a, key: k, compaction: {enabled: maybe}}]\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data string) {
		if strings.Contains(data, "_file") {
			// Files named by the configuration are read as they are
			// (TestFilesCapped covers their cap); a fuzzed path to
			// /dev/stdin or a pipe would only block the fuzzer.
			t.Skip()
		}
		path := filepath.Join(dir, "floe.yaml")
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, nil)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("refused with an empty error")
			}
			return
		}
		// An accepted configuration validates again and prints redacted.
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Load accepted a configuration Validate refuses: %v", err)
		}
		_ = cfg.String()
	})
}

// TestFilesCapped: a secret file and the configuration file have a size
// limit, so a path set to an endless file (/dev/zero) fails start-up naming
// it instead of reading until memory runs out.
func TestFilesCapped(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxSecretFileBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		yaml, want string
	}{
		"secret file over the cap": {"kafka:\n  sasl:\n    mechanism: PLAIN\n    username: u\n    password_file: " + big + "\n", "kafka.sasl.password_file"},
		"endless secret file":      {"kafka:\n  sasl:\n    mechanism: PLAIN\n    username: u\n    password_file: /dev/zero\n", "larger than the limit"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "floe.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error naming %q", err, tc.want)
			}
		})
	}
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, []byte("#"+strings.Repeat("x", MaxConfigBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(huge, nil); err == nil || !strings.Contains(err.Error(), "larger than the limit") {
		t.Fatalf("Load of a configuration over %d bytes: %v", MaxConfigBytes, err)
	}
}
