package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// StatusCommand returns "floe status": the node, its leader, the members and every
// table. Text output comes from the gRPC admin API; -o json (or --json) prints the
// status.Report JSON the node serves at GET /v1/status, unchanged for compatibility.
func StatusCommand() *cobra.Command {
	o := &options{}
	var adminAddr string
	var asJSON, cluster bool
	var sel tableSelection
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the status of the cluster's members and every table on a running node",
		Long: `Show the node and its leader, the Raft group's members and every table's state and
figures, through the node's gRPC admin API. -o json (or --json) prints the status report
the node serves at GET /v1/status over HTTP (https with --tls), with the bearer token.
--state, --match and --limit narrow the tables listed (with -o json the node narrows
its report and counts every table in table_summary).

The connection flags are those of floe ctl; --admin-addr (env FLOE_NODE_ADMIN_ADDR) is
the former name of --addr.

` + exitCodesHelp,
		Args:          exactArgs(0),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	fs := cmd.Flags()
	o.register(fs, 10*time.Second)
	fs.StringVar(&adminAddr, "admin-addr", defaultAddr, "admin address of the node (same as --addr; env FLOE_NODE_ADMIN_ADDR)")
	fs.BoolVar(&asJSON, "json", false, "print JSON (same as -o json)")
	fs.BoolVar(&cluster, "cluster", false, "with -o json: the cluster-wide report (every member's figures joined, GET /v1/status?scope=cluster)")
	sel.register(fs)
	text := o.action(func(e *env, _ []string) error { return writeStatus(e, sel) })
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		fs := cmd.Flags()
		switch {
		case fs.Changed("addr") && fs.Changed("admin-addr") && o.addr != adminAddr:
			return usageErrorf("--addr and --admin-addr differ: give one")
		case fs.Changed("admin-addr") && !fs.Changed("addr"):
			_ = fs.Set("addr", adminAddr)
		case !fs.Changed("addr") && os.Getenv("FLOE_ADDR") == "":
			if v := os.Getenv("FLOE_NODE_ADMIN_ADDR"); v != "" {
				_ = fs.Set("addr", v)
			}
		}
		if asJSON {
			if fs.Changed("output") && o.output != "json" {
				return usageErrorf("--json and --output %s: give one", o.output)
			}
			o.output = "json"
		}
		if err := o.resolve(fs); err != nil {
			return err
		}
		if cluster && o.output != "json" {
			return usageErrorf("--cluster needs -o json")
		}
		if o.output == "json" {
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			rep, err := o.fetchReport(ctx, cluster, sel.query())
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(rep)
			return err
		}
		return text(cmd, args)
	}
	finish(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// writeStatus renders the node/leader line, the members and the tables
// the selection picks.
func writeStatus(e *env, sel tableSelection) error {
	h, err := e.health.Check(e.ctx, &adminv1.HealthCheckRequest{})
	if err != nil {
		return err
	}
	ms, err := e.cluster.ListMembers(e.ctx, &adminv1.ListMembersRequest{})
	if err != nil {
		return err
	}
	ts, err := e.tables.ListTables(e.ctx, &adminv1.ListTablesRequest{})
	if err != nil {
		return err
	}
	leader := ms.GetLeader()
	if leader == "" {
		leader = h.GetLeader()
	}
	if leader == "" {
		leader = "none"
	}
	fmt.Fprintf(e.out, "node %s, leader %s", dash(h.GetNode()), leader)
	if !h.GetReady() {
		fmt.Fprintf(e.out, ", not ready: %s", dash(h.GetReason()))
	}
	fmt.Fprintln(e.out)
	writeNodeHealth(e.out, h)
	fmt.Fprintln(e.out)
	if len(ms.GetMembers()) > 0 {
		if err := writeMembers(e.out, ms.GetMembers()); err != nil {
			return err
		}
		fmt.Fprintln(e.out)
	}
	tables, matched := sel.pick(ts.GetTables())
	if err := writeTables(e.out, tables); err != nil {
		return err
	}
	if len(tables) < len(ts.GetTables()) {
		fmt.Fprintf(e.out, "\n%d of %d tables shown (%d matched)\n", len(tables), len(ts.GetTables()), matched)
	}
	return nil
}

// fetchReport GETs /v1/status (http, or https with the TLS flags) with the bearer token
// and returns the node's status.Report JSON indented by two spaces, as floe status always
// printed it. The document passes through as served (not decoded into status.Report), so
// fields of newer nodes are kept.
func (o *options) fetchReport(ctx context.Context, cluster bool, query url.Values) ([]byte, error) {
	scheme := "http"
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment}
	if o.useTLS() {
		cfg, err := o.tlsConfig()
		if err != nil {
			return nil, err
		}
		scheme = "https"
		tr.TLSClientConfig = cfg
	}
	defer tr.CloseIdleConnections()
	if cluster {
		query.Set("scope", "cluster")
	}
	target := scheme + "://" + o.addr + "/v1/status"
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, usageErrorf("--addr %q: %w", o.addr, err)
	}
	if o.token != "" {
		req.Header.Set("Authorization", "Bearer "+o.token)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("reaching floe at %s: %w", o.addr, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		msg := fmt.Sprintf("floe at %s answered %s", o.addr, resp.Status)
		if b := strings.TrimSpace(string(body)); b != "" {
			msg += ": " + b
		}
		code := ExitUnreachable
		switch resp.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			code = ExitAuth
		}
		return nil, &ExitError{Code: code, Err: fmt.Errorf("%s", msg)}
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("reading status from %s: %w", o.addr, err)}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: fmt.Errorf("decoding status from %s: %w", o.addr, err)}
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(body), "", "  "); err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: fmt.Errorf("decoding status from %s: %w", o.addr, err)}
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// writeNodeHealth writes the node's problems and one line per Kafka broker
// its readers talk to (a broker down names why and how many partitions
// wait on it).
func writeNodeHealth(w io.Writer, h *adminv1.HealthCheckResponse) {
	for _, k := range slices.Sorted(maps.Keys(h.GetProblems())) {
		fmt.Fprintf(w, "problem: %s: %s\n", k, h.GetProblems()[k])
	}
	for _, b := range h.GetBrokers() {
		if b.GetUp() {
			fmt.Fprintf(w, "kafka broker %s: up, leads %d partitions read here\n", b.GetAddr(), b.GetPartitions())
			continue
		}
		fmt.Fprintf(w, "kafka broker %s: DOWN since %s, %d partitions read here wait on it: %s\n",
			b.GetAddr(), b.GetDownSince(), b.GetPartitions(), b.GetReason())
	}
}
