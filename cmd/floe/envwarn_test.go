package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestUnknownEnvReported: floe serve with a misspelt variable
// (FLOE_KAFKA_BOOTSTRAP_SERVER, the real one ends in _SERVERS) says so on
// stderr before anything else, naming the variable it likely meant, and
// the running node shows it as its "config" problem in the status; it used
// to be one log line while the node ran on the default brokers.
func TestUnknownEnvReported(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs a node")
	}
	dir := t.TempDir()
	addrs := make([]string, 3)
	for i := range addrs {
		a, err := embedded.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = a
	}
	p := filepath.Join(dir, "floe.yaml")
	body := fmt.Sprintf("node: {id: n1, data_dir: %s/data, raft_addr: %s, rpc_addr: %s, admin_addr: %s}\nwarehouse: {location: file://%s/wh}\n",
		dir, addrs[0], addrs[1], addrs[2], dir)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := floeCommand("serve", "--config", p)
	cmd.Env = append(cmd.Env, "FLOE_KAFKA_BOOTSTRAP_SERVER=127.0.0.1:9")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	const want = "FLOE_KAFKA_BOOTSTRAP_SERVER sets nothing: it is not a Floe setting; did you mean FLOE_KAFKA_BOOTSTRAP_SERVERS?"
	r := bufio.NewReader(stderr)
	first, err := r.ReadString('\n')
	if err != nil || first != "floe: warning: environment variable "+want+"\n" {
		t.Fatalf("first line on stderr %q (%v), want the warning", first, err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }() // keep the pipe drained
	wait.Until(t, time.Minute, "the config problem in /v1/status", func() error {
		resp, err := http.Get("http://" + addrs[2] + "/v1/status")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var rep status.Report
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			return err
		}
		if !strings.Contains(rep.Problems["config"], want) {
			return fmt.Errorf("problems %v", rep.Problems)
		}
		return nil
	})
}
