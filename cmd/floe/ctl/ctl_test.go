package ctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// rec records the requests the fake services receive and answers them.
type rec struct {
	mu    sync.Mutex
	reqs  []proto.Message
	auth  []string
	err   error // answered to every call when set
	ready bool
	cur   *adminv1.Mapping // what GetMapping answers
	write *adminv1.WriteResponse
}

func (r *rec) record(ctx context.Context, m proto.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, m)
	md, _ := metadata.FromIncomingContext(ctx)
	r.auth = append(r.auth, strings.Join(md.Get("authorization"), ","))
	return r.err
}

func (r *rec) last(t *testing.T) proto.Message {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return r.reqs[len(r.reqs)-1]
}

func (r *rec) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func (r *rec) wr() *adminv1.WriteResponse {
	if r.write != nil {
		return r.write
	}
	return &adminv1.WriteResponse{RaftIndex: 42}
}

type clusterSrv struct {
	adminv1.UnimplementedClusterServiceServer
	*rec
}

func (s clusterSrv) ListMembers(ctx context.Context, q *adminv1.ListMembersRequest) (*adminv1.ListMembersResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.ListMembersResponse{Leader: "n1", Members: []*adminv1.Member{
		{Id: "n1", Role: "leader", Zone: "a", Version: "1.2.0", Healthy: true, Partitions: 6, Committers: 2},
		{Id: "n2", Role: "voter", Zone: "b", Version: "1.2.0", Healthy: false, Draining: true, UnreachableSeconds: 12.5},
	}}, nil
}

func (s clusterSrv) GetLeader(ctx context.Context, q *adminv1.GetLeaderRequest) (*adminv1.GetLeaderResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.GetLeaderResponse{Id: "n1", AdminAddr: "10.0.0.1:7421", Since: timestamppb.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))}, nil
}

func (s clusterSrv) TransferLeadership(ctx context.Context, q *adminv1.TransferLeadershipRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s clusterSrv) DrainNode(ctx context.Context, q *adminv1.DrainNodeRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s clusterSrv) UndrainNode(ctx context.Context, q *adminv1.UndrainNodeRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s clusterSrv) RemoveNode(ctx context.Context, q *adminv1.RemoveNodeRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

type tableSrv struct {
	adminv1.UnimplementedTableServiceServer
	*rec
}

func (s tableSrv) ListMappings(ctx context.Context, q *adminv1.ListMappingsRequest) (*adminv1.ListMappingsResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.ListMappingsResponse{Mappings: []*adminv1.Mapping{
		{Name: "orders", Source: "api", Topic: "orders", Namespace: "shop", Table: "orders", Format: "json"},
		{Name: "all", Source: "config", TopicRegex: "ev\\..*", Table: "{topic}", Format: "avro"},
	}}, nil
}

func (s tableSrv) GetMapping(ctx context.Context, q *adminv1.GetMappingRequest) (*adminv1.Mapping, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	if s.cur == nil || s.cur.GetName() != q.GetName() {
		return nil, status.Errorf(codes.NotFound, "mapping %q not found", q.GetName())
	}
	return proto.Clone(s.cur).(*adminv1.Mapping), nil
}

func (s tableSrv) CreateMapping(ctx context.Context, q *adminv1.CreateMappingRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s tableSrv) UpdateMapping(ctx context.Context, q *adminv1.UpdateMappingRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s tableSrv) DeleteMapping(ctx context.Context, q *adminv1.DeleteMappingRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func testTable() *adminv1.TableStatus {
	return &adminv1.TableStatus{
		Table: "shop.orders", State: "DEGRADED", Reason: "s3: connection refused", Rows: 1000, DataFiles: 7,
		DeadLetterRows: 3, Snapshots: 4, Commits: 9, FreshnessSeconds: 2.5, Committer: "n1",
		LastCommit: timestamppb.New(time.Now().Add(-5 * time.Second)),
		Partitions: []*adminv1.PartitionStatus{
			{Topic: "orders", Partition: 0, Committed: 500, HighWatermark: 510, Lag: 10, Node: "n1", Epoch: 3},
			{Topic: "orders", Partition: 1, Committed: 500, HighWatermark: 505, Lag: 5, Node: "n2", Epoch: 3},
		},
		Catalogs: []*adminv1.CatalogStatus{{Catalog: "glue", InSync: true}},
		Formats:  []string{"iceberg", "delta"}, Delta: &adminv1.DeltaStatus{Version: 12, Sequence: 9},
		Rewind: &adminv1.Rewind{Generation: 2, Policy: adminv1.ReplayPolicy_REPLACE, ReplaceDone: true, Describe: "rows from offset 0 replaced",
			From: []*adminv1.PartitionOffset{{Topic: "orders", Partition: 0, Offset: 400}},
			To:   []*adminv1.PartitionOffset{{Topic: "orders", Partition: 0, Offset: 0}}},
	}
}

func (s tableSrv) ListTables(ctx context.Context, q *adminv1.ListTablesRequest) (*adminv1.ListTablesResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.ListTablesResponse{Tables: []*adminv1.TableStatus{testTable(),
		{Table: "shop.users", State: "RUNNING", Paused: true}}}, nil
}

func (s tableSrv) GetTable(ctx context.Context, q *adminv1.GetTableRequest) (*adminv1.TableStatus, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return testTable(), nil
}

func (s tableSrv) PauseTable(ctx context.Context, q *adminv1.PauseTableRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s tableSrv) ResumeTable(ctx context.Context, q *adminv1.ResumeTableRequest) (*adminv1.WriteResponse, error) {
	return s.wr(), s.record(ctx, q)
}

func (s tableSrv) RewindTable(ctx context.Context, q *adminv1.RewindTableRequest) (*adminv1.RewindTableResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.RewindTableResponse{RaftIndex: 77, Rewind: &adminv1.Rewind{Describe: "replaying from the earliest offsets"}}, nil
}

func (s tableSrv) ListSnapshots(ctx context.Context, q *adminv1.ListSnapshotsRequest) (*adminv1.ListSnapshotsResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.ListSnapshotsResponse{CurrentSnapshotId: 22, Snapshots: []*adminv1.Snapshot{
		{SnapshotId: 11, SequenceNumber: 1, Operation: "append", Summary: map[string]string{"added-records": "10", "total-records": "10"}},
		{SnapshotId: 22, ParentSnapshotId: 11, SequenceNumber: 2, Operation: "append", Summary: map[string]string{"added-records": "5", "total-records": "15"}},
	}}, nil
}

func (s tableSrv) RunMaintenance(ctx context.Context, q *adminv1.RunMaintenanceRequest) (*adminv1.RunMaintenanceResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	return &adminv1.RunMaintenanceResponse{Node: "n1", ResultJson: `{"expired":3}`}, nil
}

type healthSrv struct {
	adminv1.UnimplementedHealthServiceServer
	*rec
}

func (s healthSrv) Check(ctx context.Context, q *adminv1.HealthCheckRequest) (*adminv1.HealthCheckResponse, error) {
	if err := s.record(ctx, q); err != nil {
		return nil, err
	}
	if s.ready {
		return &adminv1.HealthCheckResponse{Live: true, Ready: true, Node: "n1", Leader: "n1",
			Problems: map[string]string{"kafka broker": "broker b2:9092 (id 2), down for 12s: no answer for 12s"},
			Brokers: []*adminv1.KafkaBroker{{Addr: "b1:9092", NodeId: 1, Up: true, Partitions: 3},
				{Addr: "b2:9092", NodeId: 2, DownSince: "2026-12-06T04:00:00Z", Reason: "no answer for 12s", Partitions: 2}}}, nil
	}
	return &adminv1.HealthCheckResponse{Live: true, Node: "n1", Reason: "no leader"}, nil
}

// serve starts the fake admin API and returns its address.
func serve(t *testing.T) (*rec, string) {
	t.Helper()
	t.Setenv("FLOE_ADDR", "")
	t.Setenv("FLOE_TOKEN", "")
	t.Setenv("FLOE_NODE_ADMIN_ADDR", "")
	r := &rec{ready: true}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	adminv1.RegisterClusterServiceServer(s, clusterSrv{rec: r})
	adminv1.RegisterTableServiceServer(s, tableSrv{rec: r})
	adminv1.RegisterHealthServiceServer(s, healthSrv{rec: r})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return r, lis.Addr().String()
}

// run runs floe ctl with args and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runCmd(t, Command(), args...)
}

func runCmd(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(""))
	err := cmd.ExecuteContext(context.Background())
	if errOut.Len() > 0 && (len(args) == 0 || args[0] != "__complete") {
		t.Errorf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, args...)
	if err != nil {
		t.Fatalf("%v: %v (exit %d)", args, err, ExitCode(err))
	}
	return out
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	if got := ExitCode(err); got != code {
		t.Fatalf("exit code %d (%v), want %d", got, err, code)
	}
}

func wantReq(t *testing.T, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Fatalf("request\n got %v\nwant %v", got, want)
	}
}

func TestRequests(t *testing.T) {
	r, addr := serve(t)
	r.cur = &adminv1.Mapping{Name: "orders", Topic: "orders"}
	for _, c := range []struct {
		args []string
		want proto.Message
	}{
		{[]string{"members"}, &adminv1.ListMembersRequest{}},
		{[]string{"leader"}, &adminv1.GetLeaderRequest{}},
		{[]string{"leader", "transfer"}, &adminv1.TransferLeadershipRequest{}},
		{[]string{"leader", "transfer", "n2"}, &adminv1.TransferLeadershipRequest{Id: "n2"}},
		{[]string{"node", "drain", "n2"}, &adminv1.DrainNodeRequest{Id: "n2"}},
		{[]string{"node", "undrain", "n2"}, &adminv1.UndrainNodeRequest{Id: "n2"}},
		{[]string{"node", "remove", "n3"}, &adminv1.RemoveNodeRequest{Id: "n3"}},
		{[]string{"mappings", "list"}, &adminv1.ListMappingsRequest{}},
		{[]string{"mappings", "get", "orders"}, &adminv1.GetMappingRequest{Name: "orders"}},
		{[]string{"mappings", "delete", "orders"}, &adminv1.DeleteMappingRequest{Name: "orders"}},
		{[]string{"tables", "list"}, &adminv1.ListTablesRequest{}},
		{[]string{"tables", "get", "shop.orders"}, &adminv1.GetTableRequest{Table: "shop.orders"}},
		{[]string{"tables", "pause", "shop.orders"}, &adminv1.PauseTableRequest{Table: "shop.orders"}},
		{[]string{"tables", "resume", "shop.orders"}, &adminv1.ResumeTableRequest{Table: "shop.orders"}},
		{[]string{"tables", "resume", "shop.orders", "--skip"}, &adminv1.ResumeTableRequest{Table: "shop.orders", Skip: true}},
		{[]string{"tables", "snapshots", "shop.orders"}, &adminv1.ListSnapshotsRequest{Table: "shop.orders"}},
		{[]string{"tables", "maintain", "shop.orders"}, &adminv1.RunMaintenanceRequest{Table: "shop.orders"}},
		{[]string{"health"}, &adminv1.HealthCheckRequest{}},
		{[]string{"tables", "rewind", "shop.orders", "--earliest", "--policy", "replace"},
			&adminv1.RewindTableRequest{Table: "shop.orders", Target: &adminv1.RewindTableRequest_Earliest{Earliest: true}, Policy: adminv1.ReplayPolicy_REPLACE}},
		{[]string{"tables", "rewind", "shop.orders", "--latest", "--policy", "APPEND"},
			&adminv1.RewindTableRequest{Table: "shop.orders", Target: &adminv1.RewindTableRequest_Latest{Latest: true}, Policy: adminv1.ReplayPolicy_APPEND}},
		{[]string{"tables", "rewind", "shop.orders", "--timestamp", "2026-11-29T12:00:00Z", "--policy", "append"},
			&adminv1.RewindTableRequest{Table: "shop.orders", Policy: adminv1.ReplayPolicy_APPEND,
				Target: &adminv1.RewindTableRequest_Timestamp{Timestamp: timestamppb.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))}}},
		{[]string{"tables", "rewind", "shop.orders", "--offset", "orders:0:5", "--offset", "my.topic-x:12:700", "--policy", "replace"},
			&adminv1.RewindTableRequest{Table: "shop.orders", Policy: adminv1.ReplayPolicy_REPLACE,
				Target: &adminv1.RewindTableRequest_Offsets{Offsets: &adminv1.ExplicitOffsets{Offsets: []*adminv1.PartitionOffset{
					{Topic: "orders", Partition: 0, Offset: 5}, {Topic: "my.topic-x", Partition: 12, Offset: 700}}}}}},
		{[]string{"mappings", "create", "m1", "--topic", "orders", "--namespace", "shop", "--table", "orders", "--format", "avro",
			"--subject", "orders-value", "--error-mode", "suspend", "--dead-letter-topic", "dlq", "--tombstones", "dlq",
			"--start-offset", "earliest", "--partition-by", "created_at:day", "--partition-by", "id:bucket[16]",
			"--snapshot-max-age", "168h", "--snapshot-max-count", "50", "--orphan-min-age", "72h"},
			&adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m1", Topic: "orders", Namespace: "shop", Table: "orders",
				Format: "avro", Subject: "orders-value", ErrorMode: "suspend", DeadLetterTopic: "dlq", Tombstones: "dlq",
				StartOffset: "earliest", PartitionBy: []*adminv1.PartitionField{{Column: "created_at", Transform: "day"}, {Column: "id", Transform: "bucket[16]"}},
				SnapshotMaxAge: "168h", SnapshotMaxCount: 50, OrphanMinAge: "72h"}}},
		{[]string{"mappings", "create", "m3", "--topic", "deep", "--max-nesting-depth", "8", "--max-columns", "200"},
			&adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m3", Topic: "deep", MaxNestingDepth: 8, MaxColumns: 200}}},
		{[]string{"mappings", "create", "m5", "--topic", "cold", "--storage-class", "INTELLIGENT_TIERING"},
			&adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m5", Topic: "cold", StorageClass: "INTELLIGENT_TIERING"}}},
		{[]string{"mappings", "create", "m5", "--topic", "users", "--mode", "upsert", "--key", "id, region"},
			&adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m5", Topic: "users", Mode: "upsert", Key: []string{"id", "region"}}}},
		{[]string{"mappings", "create", "m4", "--topic", "orders", "--name", "orders_v2"},
			&adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m4", Topic: "orders", Table: "orders_v2"}}},
		{[]string{"mappings", "create", "m2", "--topic-regex", `ev\..*`, "--partition-by", "region"},
			&adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m2", TopicRegex: `ev\..*`,
				PartitionBy: []*adminv1.PartitionField{{Column: "region", Transform: "identity"}}}}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			mustRun(t, append([]string{"--addr", addr}, c.args...)...)
			wantReq(t, r.last(t), c.want)
		})
	}
}

func TestMappingsUpdateOverlaysSetFlags(t *testing.T) {
	r, addr := serve(t)
	cur := &adminv1.Mapping{Name: "orders", Source: "api", Topic: "orders", Namespace: "shop", Table: "orders", Format: "json",
		ErrorMode: "log", PartitionBy: []*adminv1.PartitionField{{Column: "ts", Transform: "day"}}, SnapshotMaxCount: 10, MaxNestingDepth: 12}
	r.cur = cur

	out := mustRun(t, "--addr", addr, "mappings", "update", "orders", "--format", "raw")
	if out != "ok (raft index 42)\n" {
		t.Fatalf("output %q", out)
	}
	want := proto.Clone(cur).(*adminv1.Mapping)
	want.Format, want.Source = "raw", ""
	wantReq(t, r.last(t), &adminv1.UpdateMappingRequest{Mapping: want, Name: "orders"})
	if n := r.count(); n != 2 {
		t.Fatalf("%d requests, want GetMapping then UpdateMapping", n)
	}

	mustRun(t, "--addr", addr, "mappings", "update", "orders", "--topic-regex", "orders-.*", "--snapshot-max-count", "0", "--partition-by", "",
		"--max-columns", "300", "--storage-class", "STANDARD_IA", "--formats", "iceberg, delta",
		"--delta-checkpoint-interval", "25", "--delta-log-retention", "48h")
	want = proto.Clone(cur).(*adminv1.Mapping)
	want.Source, want.Topic, want.TopicRegex, want.SnapshotMaxCount, want.PartitionBy = "", "", "orders-.*", 0, nil
	want.MaxColumns = 300 // max_nesting_depth, not given, stays 12
	want.StorageClass = "STANDARD_IA"
	want.Formats = []string{"iceberg", "delta"}
	want.DeltaCheckpointInterval, want.DeltaLogRetention = 25, "48h"
	wantReq(t, r.last(t), &adminv1.UpdateMappingRequest{Mapping: want, Name: "orders"})

	// Updating a mapping that does not exist: the GetMapping's NotFound.
	_, err := run(t, "--addr", addr, "mappings", "update", "nope", "--format", "raw")
	wantCode(t, err, ExitNotFound)
	if !strings.Contains(err.Error(), `mapping "nope" not found`) || strings.Contains(err.Error(), "rpc error") {
		t.Fatalf("error %q", err)
	}
}

func TestMappingsFile(t *testing.T) {
	r, addr := serve(t)
	dir := t.TempDir()
	yml := filepath.Join(dir, "m.yaml")
	os.WriteFile(yml, []byte(`
name: clicks
topic: clicks
namespace: web
table: clicks
format: json
error_mode: skip
partition_by:
  - column: ts
    transform: hour
snapshot_max_count: 20
max_nesting_depth: 10
storage_class: STANDARD_IA
`), 0o600)
	js := filepath.Join(dir, "m.json")
	os.WriteFile(js, []byte(`{"name": "clicks", "topicRegex": "clicks-.*", "snapshot_max_age": "24h"}`), 0o600)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\ntopik: y\n"), 0o600)

	want := &adminv1.Mapping{Name: "clicks", Topic: "clicks", Namespace: "web", Table: "clicks", Format: "json", ErrorMode: "skip",
		PartitionBy: []*adminv1.PartitionField{{Column: "ts", Transform: "hour"}}, SnapshotMaxCount: 20, MaxNestingDepth: 10, StorageClass: "STANDARD_IA"}
	mustRun(t, "--addr", addr, "mappings", "create", "-f", yml)
	wantReq(t, r.last(t), &adminv1.CreateMappingRequest{Mapping: want})

	// Flags override the file's fields.
	mustRun(t, "--addr", addr, "mappings", "create", "clicks", "-f", yml, "--format", "raw")
	w2 := proto.Clone(want).(*adminv1.Mapping)
	w2.Format = "raw"
	wantReq(t, r.last(t), &adminv1.CreateMappingRequest{Mapping: w2})

	// With -f, update sends the file as the whole mapping (no GetMapping).
	n := r.count()
	mustRun(t, "--addr", addr, "mappings", "update", "-f", js)
	wantReq(t, r.last(t), &adminv1.UpdateMappingRequest{Mapping: &adminv1.Mapping{Name: "clicks", TopicRegex: "clicks-.*", SnapshotMaxAge: "24h"}, Name: "clicks"})
	if r.count() != n+1 {
		t.Fatal("update -f fetched the mapping")
	}

	n = r.count()
	for _, args := range [][]string{
		{"mappings", "create", "-f", bad},                           // unknown field
		{"mappings", "create", "other", "-f", yml},                  // names differ
		{"mappings", "create", "-f", filepath.Join(dir, "missing")}, // no file
		{"mappings", "create", "x", "--topic", "a", "--topic-regex", "b"},
		{"mappings", "create", "--topic", "a"}, // no name
		{"mappings", "create", "x", "--partition-by", "col:"},
	} {
		_, err := run(t, append([]string{"--addr", addr}, args...)...)
		wantCode(t, err, ExitUsage)
	}
	if r.count() != n {
		t.Fatal("a request was sent for a usage error")
	}
}

func TestWriteOutput(t *testing.T) {
	r, addr := serve(t)
	if out := mustRun(t, "--addr", addr, "tables", "pause", "a.b"); out != "ok (raft index 42)\n" {
		t.Fatalf("text %q", out)
	}
	r.write = &adminv1.WriteResponse{Unchanged: true}
	if out := mustRun(t, "--addr", addr, "mappings", "create", "x", "--topic", "x"); out != "unchanged\n" {
		t.Fatalf("text %q", out)
	}
	r.write = &adminv1.WriteResponse{RaftIndex: 9}
	out := mustRun(t, "--addr", addr, "-o", "json", "node", "drain", "n2")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got["raft_index"] != "9" || got["unchanged"] != false || got["message"] != "" {
		t.Fatalf("json %s", out)
	}
	if !strings.Contains(out, "\n  \"raft_index\"") {
		t.Fatalf("not indented: %s", out)
	}
	out = mustRun(t, "--addr", addr, "tables", "rewind", "a.b", "--earliest", "--policy", "append")
	if out != "ok (raft index 77)\nreplaying from the earliest offsets\n" {
		t.Fatalf("rewind text %q", out)
	}
}

func TestReadOutput(t *testing.T) {
	_, addr := serve(t)
	out := mustRun(t, "--addr", addr, "members")
	for _, want := range []string{"MEMBER  ROLE", "PARTITIONS  COMMITTERS", "n1      leader  a     1.2.0    yes", "no (12.5s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("members text lacks %q:\n%s", want, out)
		}
	}
	out = mustRun(t, "--addr", addr, "-o", "json", "members")
	var ms struct {
		Leader  string           `json:"leader"`
		Members []map[string]any `json:"members"`
	}
	if err := json.Unmarshal([]byte(out), &ms); err != nil || ms.Leader != "n1" || len(ms.Members) != 2 || ms.Members[1]["unreachable_seconds"] != 12.5 {
		t.Fatalf("members json %v: %s", err, out)
	}
	if _, ok := ms.Members[0]["unreachable_seconds"]; !ok {
		t.Fatal("unpopulated fields missing")
	}

	out = mustRun(t, "--addr", addr, "tables", "list")
	for _, want := range []string{"TABLE        STATE", "FRESHNESS  LAG  LAST-COMMIT", "shop.orders  DEGRADED", " 15 ", "5s ago",
		"RUNNING (paused)", "never", "\nshop.orders: s3: connection refused\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("tables text lacks %q:\n%s", want, out)
		}
	}
	out = mustRun(t, "--addr", addr, "tables", "get", "shop.orders")
	for _, want := range []string{"state:", "DEGRADED", "orders/1", "glue", "last rewind: generation 2, REPLACE", "rows replaced", "orders/0   400   0",
		"iceberg, delta", "version 12 (commit sequence 9)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table text lacks %q:\n%s", want, out)
		}
	}
	out = mustRun(t, "--addr", addr, "-o", "json", "tables", "get", "shop.orders")
	var ts map[string]any
	if err := json.Unmarshal([]byte(out), &ts); err != nil || ts["data_files"] != "7" || ts["rewind"] == nil {
		t.Fatalf("table json %v: %s", err, out)
	}
	out = mustRun(t, "--addr", addr, "mappings", "list")
	if !strings.Contains(out, "/ev\\..*/") || !strings.Contains(out, "shop.orders") {
		t.Errorf("mappings text:\n%s", out)
	}
	out = mustRun(t, "--addr", addr, "tables", "snapshots", "x.y")
	if !strings.Contains(out, "22 (current)  11") {
		t.Errorf("snapshots text:\n%s", out)
	}
	out = mustRun(t, "--addr", addr, "tables", "maintain", "x.y")
	if !strings.Contains(out, "node n1") || !strings.Contains(out, `"expired": 3`) {
		t.Errorf("maintain text:\n%s", out)
	}
	out = mustRun(t, "--addr", addr, "leader")
	if out != "leader n1 (admin 10.0.0.1:7421), since 2026-11-29T12:00:00Z\n" {
		t.Errorf("leader text %q", out)
	}
}

func TestToken(t *testing.T) {
	r, addr := serve(t)
	mustRun(t, "--addr", addr, "--token", "tok-flag", "members")
	tokFile := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tokFile, []byte("tok-file\n"), 0o600)
	mustRun(t, "--addr", addr, "--token-file", tokFile, "members")
	t.Setenv("FLOE_TOKEN", "tok-env")
	mustRun(t, "--addr", addr, "members")
	t.Setenv("FLOE_TOKEN", "")
	mustRun(t, "--addr", addr, "members")
	r.mu.Lock()
	got := strings.Join(r.auth, "|")
	r.mu.Unlock()
	if got != "Bearer tok-flag|Bearer tok-file|Bearer tok-env|" {
		t.Fatalf("authorization metadata %q", got)
	}
	_, err := run(t, "--addr", addr, "--token", "a", "--token-file", tokFile, "members")
	wantCode(t, err, ExitUsage)
}

func TestAddrFromEnv(t *testing.T) {
	r, addr := serve(t)
	t.Setenv("FLOE_ADDR", addr)
	mustRun(t, "members")
	wantReq(t, r.last(t), &adminv1.ListMembersRequest{})
}

func TestExitCodes(t *testing.T) {
	r, addr := serve(t)
	for _, c := range []struct {
		err  error
		code int
		msg  string
	}{
		{status.Error(codes.NotFound, "table a.b not found"), ExitNotFound, "not found: table a.b not found"},
		// The kind is said once, whether the node's message says it or not.
		{status.Error(codes.NotFound, "not found: table a.b"), ExitNotFound, "not found: table a.b"},
		{status.Error(codes.NotFound, "deleting mapping clicks: no such mapping"), ExitNotFound, "not found: deleting mapping clicks: no such mapping"},
		// A user without a token learns how to give one.
		{status.Error(codes.Unauthenticated, "missing bearer token"), ExitAuth, "unauthenticated: missing bearer token (give a token of the right scope with --token, --token-file or FLOE_TOKEN)"},
		{status.Error(codes.PermissionDenied, "token lacks admin scope"), ExitAuth, "permission denied: token lacks admin scope"},
		{status.Error(codes.InvalidArgument, "mapping.topic: set topic or topic_regex"), ExitRefused, "refused: mapping.topic: set topic or topic_regex"},
		{status.Error(codes.AlreadyExists, "mapping x exists"), ExitRefused, "refused: mapping x exists"},
		{status.Error(codes.FailedPrecondition, "not suspended"), ExitRefused, "refused: not suspended"},
		{status.Error(codes.Internal, "boom"), ExitFailure, "boom"},
	} {
		r.mu.Lock()
		r.err = c.err
		r.mu.Unlock()
		_, err := run(t, "--addr", addr, "tables", "get", "a.b")
		wantCode(t, err, c.code)
		if err.Error() != c.msg {
			t.Errorf("error %q, want %q", err, c.msg)
		}
	}
	r.mu.Lock()
	r.err = nil
	r.ready = false
	r.mu.Unlock()
	_, err := run(t, "--addr", addr, "health")
	wantCode(t, err, ExitNotReady)
	if !strings.Contains(err.Error(), "no leader") {
		t.Errorf("health error %q", err)
	}
	out, err := run(t, "--addr", addr, "-o", "json", "health")
	wantCode(t, err, ExitNotReady)
	if !strings.Contains(out, `"reason": "no leader"`) {
		t.Errorf("health json %s", out)
	}
	r.mu.Lock()
	r.ready = true
	r.mu.Unlock()
	if out := mustRun(t, "--addr", addr, "health"); out != "ready (node n1, leader n1)\n" {
		t.Errorf("health text %q", out)
	}

	// Usage errors send nothing.
	n := r.count()
	for _, args := range [][]string{
		{"--bogus", "members"},
		{"members", "--bogus"},
		{"-o", "yaml", "members"},
		{"members", "extra"},
		{"node", "drain"},
		{"node", "frobnicate"},
		{"tables", "get"},
		{"tables", "rewind", "a.b", "--earliest"}, // no policy
		{"tables", "rewind", "a.b", "--earliest", "--policy", "merge"}, // bad policy
		{"tables", "rewind", "a.b", "--policy", "append"},              // no target
		{"tables", "rewind", "a.b", "--earliest", "--latest", "--policy", "append"},
		{"tables", "rewind", "a.b", "--timestamp", "yesterday", "--policy", "append"},
		{"tables", "rewind", "a.b", "--offset", "orders:x:1", "--policy", "append"},
		{"tables", "rewind", "a.b", "--offset", "orders", "--policy", "append"},
		{"--timeout", "0s", "members"},
		{"--cert-file", "c.pem", "members"},
		{"completion", "tcsh"},
	} {
		_, err := run(t, append([]string{"--addr", addr}, args...)...)
		if ExitCode(err) != ExitUsage {
			t.Errorf("%v: exit code %d (%v), want 2", args, ExitCode(err), err)
		}
	}
	if r.count() != n {
		t.Error("a request was sent for a usage error")
	}
}

func TestUnreachable(t *testing.T) {
	t.Setenv("FLOE_TOKEN", "")
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	_, err = run(t, "--addr", addr, "--timeout", "5s", "members")
	wantCode(t, err, ExitUnreachable)
	if strings.Contains(err.Error(), "rpc error") || !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q", err)
	}
}

func TestExitCode(t *testing.T) {
	if ExitCode(nil) != 0 || ExitCode(errors.New("x")) != 1 {
		t.Fatal("nil or plain error")
	}
	e := &ExitError{Code: 6, Err: errors.New("gone")}
	if ExitCode(fmt_wrap(e)) != 6 || e.Error() != "gone" || !errors.Is(e, e.Err) {
		t.Fatal("ExitError")
	}
	if ExitCode(status.Error(codes.Unavailable, "x")) != ExitUnreachable {
		t.Fatal("raw status")
	}
}

func fmt_wrap(err error) error { return errors.Join(errors.New("context"), err) }

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out := mustRun(t, "completion", sh)
		if len(out) < 200 || !strings.Contains(out, "ctl") {
			t.Errorf("%s completion: %d bytes", sh, len(out))
		}
	}
	if out := mustRun(t, "completion", "bash"); !strings.Contains(out, "bash completion") {
		t.Error("not a bash completion script")
	}
}

func TestHelpMentionsExitCodes(t *testing.T) {
	out := mustRun(t, "--help")
	if !strings.Contains(out, "Exit codes:") || !strings.Contains(out, "7  refused by the server") {
		t.Fatalf("help:\n%s", out)
	}
}

func TestStatusText(t *testing.T) {
	_, addr := serve(t)
	out, err := runCmd(t, StatusCommand(), "--addr", addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node n1, leader n1\n", "MEMBER  ROLE", "shop.orders  DEGRADED", "shop.orders: s3: connection refused",
		"problem: kafka broker: broker b2:9092 (id 2), down for 12s: no answer for 12s\n",
		"kafka broker b1:9092: up, leads 3 partitions read here\n",
		"kafka broker b2:9092: DOWN since 2026-12-06T04:00:00Z, 2 partitions read here wait on it: no answer for 12s\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	if !strings.HasPrefix(out, "node n1, leader n1") {
		t.Errorf("node line is not first:\n%s", out)
	}
}

func TestStatusJSON(t *testing.T) {
	t.Setenv("FLOE_ADDR", "")
	t.Setenv("FLOE_TOKEN", "")
	t.Setenv("FLOE_NODE_ADMIN_ADDR", "")
	report := `{"node":"n1","leader":"n1","raft_state":"Leader","generated_at":"2026-11-29T12:00:00Z","applied_index":5,"skipped_commands":0,"tables":[{"table":"a.b","state":"RUNNING","rows":3,"partitions":[]}]}`
	var (
		mu   sync.Mutex
		auth []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) {
		mu.Lock()
		auth = append(auth, q.Header.Get("Authorization"))
		mu.Unlock()
		if q.URL.Path != "/v1/status" || (q.URL.RawQuery != "" && q.URL.RawQuery != "scope=cluster") {
			http.NotFound(w, q)
			return
		}
		if q.Header.Get("Authorization") == "Bearer bad" {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(report + "\n"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var want bytes.Buffer
	json.Indent(&want, []byte(report), "", "  ")
	want.WriteByte('\n')

	for _, args := range [][]string{
		{"--addr", addr, "-o", "json", "--token", "s3cret"},
		{"--admin-addr", addr, "--json", "--token", "s3cret"},
		{"--addr", addr, "--output", "json", "--json", "--token", "s3cret"},
		{"--addr", addr, "-o", "json", "--cluster", "--token", "s3cret"},
	} {
		out, err := runCmd(t, StatusCommand(), args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if out != want.String() {
			t.Fatalf("%v: output\n%s\nwant\n%s", args, out, want.String())
		}
	}
	t.Setenv("FLOE_NODE_ADMIN_ADDR", addr)
	t.Setenv("FLOE_TOKEN", "s3cret")
	if _, err := runCmd(t, StatusCommand(), "--json"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, a := range auth {
		if a != "Bearer s3cret" {
			t.Errorf("Authorization %q", a)
		}
	}
	if len(auth) != 5 {
		t.Errorf("%d requests", len(auth))
	}
	mu.Unlock()

	_, err := runCmd(t, StatusCommand(), "--addr", addr, "--json", "--token", "bad")
	wantCode(t, err, ExitAuth)
	_, err = runCmd(t, StatusCommand(), "--addr", addr, "--json", "-o", "text")
	wantCode(t, err, ExitUsage)
	_, err = runCmd(t, StatusCommand(), "--addr", addr, "-o", "xml")
	wantCode(t, err, ExitUsage)
	_, err = runCmd(t, StatusCommand(), "--addr", addr, "--cluster")
	wantCode(t, err, ExitUsage)
	srv.Close()
	_, err = runCmd(t, StatusCommand(), "--addr", addr, "--json")
	wantCode(t, err, ExitUnreachable)
}

// TestREADMEExitCodes: the README lists the exit codes the CLI has, as
// --help prints them.
func TestREADMEExitCodes(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(exitCodesHelp, "\n")[1:] {
		if !strings.Contains(string(readme), line+"\n") {
			t.Errorf("README.md lacks the exit code line %q", line)
		}
	}
}
