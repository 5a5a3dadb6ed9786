//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/floe-io/floe/cmd/floe/ctl"
)

// TestDemoServe: floe demo --serve, beside a node on the default ports,
// prints the console's URL and a token after the summary; the console and
// the API answer with the token and refuse without it; the printed floe ctl
// command works as printed; rows keep arriving; and SIGINT stops it with a
// clean exit.
func TestDemoServe(t *testing.T) {
	occupyDefaultPorts(t)
	pr, pw := io.Pipe()
	cmd := demoCmd()
	cmd.SetArgs([]string{"--serve", "--dir", t.TempDir(), "--records", "1000", "--partitions", "2", "--serve-rate", "200"})
	cmd.SetOut(pw)
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(t.Context())
		pw.Close()
		done <- err
	}()
	addr, token, ctlLine := readServeHelp(t, pr)
	go io.Copy(io.Discard, pr) //nolint:errcheck // the rest of the output: kept flowing

	get := func(path, tok string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := get("/ui/login", ""); r.StatusCode != http.StatusOK {
		t.Fatalf("console login page: %s", r.Status)
	}
	if r := get("/v1/status", ""); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status without the token: %s, want 401", r.Status)
	}
	waitForRows(t, get, token, 1000) // more than the summary's: the producer goes on

	// The printed ctl command, run as printed (after the binary's name).
	var out bytes.Buffer
	c := ctl.Command()
	c.SetArgs(strings.Fields(ctlLine))
	c.SetOut(&out)
	if err := c.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("printed command ctl %s: %v\n%s", ctlLine, err, out.String())
	}
	if !strings.Contains(out.String(), "demo.orders") {
		t.Fatalf("ctl %s printed no demo.orders:\n%s", ctlLine, out.String())
	}

	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("demo --serve stopped by SIGINT: %v, want a clean exit", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("demo --serve still running 60s after SIGINT")
	}
}

// readServeHelp reads the demo's output up to its floe ctl examples and
// returns the admin address, the token and the arguments of the first
// printed ctl command.
func readServeHelp(t *testing.T, r io.Reader) (addr, token, ctlArgs string) {
	t.Helper()
	sc := bufio.NewScanner(r)
	var seen []string
	for sc.Scan() {
		l := sc.Text()
		seen = append(seen, l)
		switch f := strings.Fields(l); {
		case len(f) >= 2 && f[0] == "console":
			addr = strings.TrimSuffix(strings.TrimPrefix(f[1], "http://"), "/ui/")
		case len(f) >= 2 && f[0] == "token":
			token = f[1]
		case strings.Contains(l, " ctl tables get "):
			_, ctlArgs, _ = strings.Cut(l, " ctl ")
			if addr == "" || token == "" {
				t.Fatalf("ctl example before the console URL and token:\n%s", strings.Join(seen, "\n"))
			}
			return addr, token, ctlArgs
		}
	}
	t.Fatalf("demo --serve ended its output (%v) without a ctl example:\n%s", sc.Err(), strings.Join(seen, "\n"))
	return "", "", ""
}

// waitForRows polls the status API with the token until demo.orders has
// more than rows rows.
func waitForRows(t *testing.T, get func(path, tok string) *http.Response, token string, rows int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := get("/v1/status", token)
		if r.StatusCode != http.StatusOK {
			t.Fatalf("status with the token: %s", r.Status)
		}
		var rep struct {
			Tables []struct {
				Table string `json:"table"`
				Rows  int64  `json:"rows"`
			} `json:"tables"`
		}
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			t.Fatal(err)
		}
		for _, tb := range rep.Tables {
			if tb.Table == "demo.orders" && tb.Rows > rows {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo.orders has not grown past %d rows in 60s while serving: %+v", rows, rep.Tables)
		}
		time.Sleep(200 * time.Millisecond) // a poll's interval, not a wait for an outcome
	}
}
