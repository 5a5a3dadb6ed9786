package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesBadConfig runs the binary with an invalid config: it must
// stop at once with exit code 2 and name the field.
func TestServeRefusesBadConfig(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	path := filepath.Join(t.TempDir(), "floe.yaml")
	if err := os.WriteFile(path, []byte("kafka: {bootstrap_servers: [nohost]}\ncommit_interval: 1ms\ntables: [{topic: a, error_mode: ignore}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := floeCommand("serve", "--config", path).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitConfig {
		t.Fatalf("exit %v, want code %d; output:\n%s", err, exitConfig, out)
	}
	for _, field := range []string{"kafka.bootstrap_servers[0]", "commit_interval", "tables[0].error_mode"} {
		if !strings.Contains(string(out), field) {
			t.Errorf("output does not name %s:\n%s", field, out)
		}
	}
	// FLOE_ variables override the file and are validated the same way.
	cmd := floeCommand("serve", "--config", path)
	cmd.Env = append(cmd.Env, "FLOE_COMMIT_INTERVAL=never")
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "commit_interval (from FLOE_COMMIT_INTERVAL)") {
		t.Errorf("env error does not name the field:\n%s", out)
	}
}
