package admin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/status"
)

func sample() status.Report {
	return status.Report{Node: "n1", Leader: "n1", RaftState: "Leader", Problems: map[string]string{"kafka": "dial tcp: refused"},
		Tables: []status.TableReport{{Table: "db.orders", State: "DEGRADED", Reason: "storage: bucket gone", Rows: 42, DataFiles: 2, Snapshots: 2,
			LastCommit: time.Now().Add(-3 * time.Second), LastCommitAgeSec: 3, FreshnessSec: 4.2,
			Partitions: []status.PartitionReport{{Topic: "orders", Partition: 0, Committed: 21, Recorded: 30, HighWatermark: 40, Lag: 19, Node: "n1", Epoch: 1}}}}}
}

type src struct {
	rep   status.Report
	ready error
}

// ClusterReport marks the report it answers, so a test sees which one the
// server called.
func (s src) ClusterReport(ctx context.Context) (status.Report, error) {
	rep, err := s.Report(ctx)
	rep.Cluster = &status.ClusterScope{Nodes: []string{rep.Node}}
	return rep, err
}

func (s src) Report(context.Context) (status.Report, error) { return s.rep, nil }
func (s src) Ready() error                                  { return s.ready }
func (s src) Maintain(_ context.Context, table string, force bool) (any, error) {
	if table != "db.orders" {
		return nil, errors.New("no mapping writes " + table)
	}
	return map[string]any{"files_rewritten": 3, "forced": force}, nil
}

func TestServerEndpoints(t *testing.T) {
	srv, err := Listen("127.0.0.1:0", src{rep: sample(), ready: errors.New("no raft leader")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	rep, err := Fetch(context.Background(), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 1 || rep.Tables[0].Partitions[0].Lag != 19 {
		t.Fatalf("report over HTTP: %+v", rep)
	}
	for scope, cluster := range map[string]bool{"": false, "?scope=node": false, "?scope=cluster": true} {
		resp, err := http.Get("http://" + srv.Addr() + "/v1/status" + scope)
		if err != nil {
			t.Fatal(err)
		}
		var got status.Report
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || (got.Cluster != nil) != cluster {
			t.Fatalf("/v1/status%s: cluster scope %+v (err %v), want cluster %v", scope, got.Cluster, err, cluster)
		}
	}
	for _, q := range []string{"?scope=all", "?state=SLEEPING", "?limit=-1"} {
		bad, err := http.Get("http://" + srv.Addr() + "/v1/status" + q)
		if err != nil {
			t.Fatal(err)
		}
		bad.Body.Close()
		if bad.StatusCode != http.StatusBadRequest {
			t.Fatalf("/v1/status%s: %s, want 400", q, bad.Status)
		}
	}
	// A selection narrows the tables and the summary counts them all.
	for q, want := range map[string]int{"?state=DEGRADED": 1, "?state=degraded&limit=1": 1, "?state=FAILED": 0, "?limit=1&offset=1": 0} {
		resp, err := http.Get("http://" + srv.Addr() + "/v1/status" + q)
		if err != nil {
			t.Fatal(err)
		}
		var got status.Report
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || len(got.Tables) != want || got.Summary == nil || got.Summary.Total != len(rep.Tables) {
			t.Fatalf("/v1/status%s: %d tables, summary %+v (err %v); want %d of %d", q, len(got.Tables), got.Summary, err, want, len(rep.Tables))
		}
	}
	resp, err := http.Get("http://" + srv.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("readyz without leader = %d", resp.StatusCode)
	}
	resp, err = http.Get("http://" + srv.Addr() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz = %d", resp.StatusCode)
	}
	if out, err := RunMaintenance(context.Background(), srv.Addr(), "db.orders", false); err != nil || !strings.Contains(string(out), `"files_rewritten": 3`) {
		t.Fatalf("maintenance: %s %v", out, err)
	}
	if _, err := RunMaintenance(context.Background(), srv.Addr(), "db.nope", false); err == nil || !strings.Contains(err.Error(), "no mapping writes db.nope") {
		t.Fatalf("maintenance of an unknown table: %v", err)
	}
	if _, err := Fetch(context.Background(), "127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "reaching floe") {
		t.Fatalf("unreachable node: %v", err)
	}
	for _, tc := range []struct {
		query, want string
		code        int
	}{
		{"", `"forced": false`, http.StatusOK},
		{"?force=true", `"forced": true`, http.StatusOK},
		{"?force=maybe", `force: "maybe" is not a boolean`, http.StatusBadRequest},
	} {
		resp, err := http.Post("http://"+srv.Addr()+"/v1/tables/db.orders/maintenance"+tc.query, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
			t.Errorf("maintenance%s: %d %s, want %d with %s", tc.query, resp.StatusCode, body, tc.code, tc.want)
		}
	}
}
