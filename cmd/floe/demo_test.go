package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDemoFormats: floe demo --formats maps the sample topic in the
// formats given, and a format Floe does not write stops the demo with the
// field named before anything starts.
func TestDemoFormats(t *testing.T) {
	for _, c := range []struct {
		formats []string
		err     string
	}{
		{nil, ""},
		{[]string{"iceberg", "delta"}, ""},
		{[]string{"delta"}, ""},
		{[]string{"hudi"}, "tables[0].formats"},
	} {
		cfg, err := demoConfig(t.TempDir(), "orders", []string{"127.0.0.1:9092"}, c.formats)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("formats %v: err %v, want one naming %s", c.formats, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("formats %v: %v", c.formats, err)
		}
		if got := cfg.Tables[0].Formats; len(c.formats) > 0 && !slices.Equal(got, c.formats) {
			t.Fatalf("formats %v: table has %v", c.formats, got)
		}
	}
}

// occupyDefaultPorts listens on a node's default ports (Raft 7420, admin
// 7421, internal RPC 7422) for the test's life, as a running node would. A
// port something else holds already is occupied just the same.
func occupyDefaultPorts(t *testing.T) {
	t.Helper()
	for _, addr := range []string{"127.0.0.1:7420", "127.0.0.1:7421", "127.0.0.1:7422"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s is taken already: %v", addr, err)
			continue
		}
		t.Cleanup(func() { l.Close() })
	}
}

// TestDemoBesideANode: the demo runs to its end while a node holds the
// default ports, checks exactly once, and its output ends with the table
// queried. Where the Python environment the demo's commands make exists,
// the printed PyIceberg and DuckDB commands run too and agree.
func TestDemoBesideANode(t *testing.T) {
	occupyDefaultPorts(t)
	var out bytes.Buffer
	o := demoOptions{dir: t.TempDir(), records: 3000, partitions: 2, rate: 3000}
	if err := runDemo(t.Context(), &out, o); err != nil {
		t.Fatalf("demo beside a node on the default ports: %v\n%s", err, out.String())
	}
	text := out.String()
	if !strings.Contains(text, "exactly once          every produced offset") {
		t.Fatalf("no exactly-once line:\n%s", text)
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	last := strings.Fields(lines[len(lines)-1])
	// 3,000 orders (one in 5,000 is malformed: none here), the second half
	// with a coupon.
	if len(last) != 4 || last[0] != "(all)" || last[1] != "3000" || last[3] != "1500" {
		t.Fatalf("the output does not end with the query's total line (all) 3000 ... 1500:\n%s", text)
	}
	runPrintedQueries(t, text)
}

// runPrintedQueries runs the demo's printed PyIceberg and DuckDB one-liners
// when their environment exists (it is made by the printed pip command,
// from PyPI only), and checks they count what iceberg-go counted.
func runPrintedQueries(t *testing.T, text string) {
	py := demoVenvPython()
	if _, err := os.Stat(py); err != nil {
		t.Logf("not running the printed Python commands: no %s (make it with the printed venv and pip lines)", py)
		return
	}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, py+" -c ") {
			continue
		}
		res, err := exec.CommandContext(t.Context(), "bash", "-c", l).CombinedOutput()
		if err != nil {
			t.Fatalf("printed command failed: %v\n%s\n%s", err, l, res)
		}
		want := "3000" // PyIceberg prints the row count
		if strings.Contains(l, "duckdb") {
			want = " 750 " // DuckDB's table: orders 0, 4, ... 2996 ship to DE
		}
		if !strings.Contains(string(res), want) {
			t.Fatalf("printed command printed no %q:\n%s\n%s", want, l, res)
		}
	}
}

// TestDemoPinsMatchInterop: the DuckDB packages the demo prints are the
// ones the interop suite installs and runs its engine matrix with.
func TestDemoPinsMatchInterop(t *testing.T) {
	req, err := os.ReadFile("../../test/interop/requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, pin := range []string{demoDuckDB, "duckdb-ext-iceberg==" + demoDuckDBExt, "duckdb-ext-avro==" + demoDuckDBExt} {
		if !strings.Contains(string(req), pin+"\n") {
			t.Errorf("test/interop/requirements.txt does not pin %s", pin)
		}
	}
}
