package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/proto/auth"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeBackend records the calls it gets and answers canned results: writes
// commit at index 42, or fail with err when set.
type fakeBackend struct {
	mu       sync.Mutex
	calls    []string
	err      error // returned by every write and by Mappings/Snapshots
	readyErr error
	mapping  Mapping       // last PutMapping
	rewind   RewindRequest // last RewindTable
	callers  []string      // Caller of each PauseTable
	node     string        // Report.State
}

func (f *fakeBackend) state() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.node
}

func (f *fakeBackend) record(format string, args ...any) (WriteResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
	if f.err != nil {
		return WriteResult{}, f.err
	}
	return WriteResult{Index: 42, Message: "done"}, nil
}

func (f *fakeBackend) lastCall() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return ""
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeBackend) ClusterReport(ctx context.Context) (status.Report, error) { return f.Report(ctx) }

func (f *fakeBackend) Report(context.Context) (status.Report, error) {
	return status.Report{Node: "n1", Leader: "n1", RaftState: "Leader",
		Members: []status.MemberReport{{ID: "n1", Role: "leader", Zone: "a", Healthy: true, Partitions: 3, Committers: 1},
			{ID: "n2", Role: "voter", Zone: "b", UpgradeRequired: true}},
		State: f.state(),
		Tables: []status.TableReport{{Table: "db.orders", State: "RUNNING", Rows: 42, Paused: true,
			LastCommit: time.Unix(1700000000, 0),
			Partitions: []status.PartitionReport{{Topic: "orders", Partition: 0, Committed: 21, Lag: 19, LagSec: 2.5}},
			Catalogs:   []status.CatalogReport{{Catalog: "glue", InSync: true}},
			Rewind:     &status.RewindReport{Generation: 1, Policy: ReplayReplace, Describe: "replaced"}}},
	}, nil
}

func (f *fakeBackend) Ready() error { return f.readyErr }

func (f *fakeBackend) Maintain(_ context.Context, table string, _ bool) (any, error) {
	if _, err := f.record("Maintain %s", table); err != nil {
		return nil, err
	}
	return map[string]int{"expired": 3}, nil
}

// Resume makes the legacy POST /v1/tables/{table}/resume route exist.
func (f *fakeBackend) Resume(_ context.Context, table string, skip bool) (any, error) {
	return f.record("Resume %s %v", table, skip)
}

func (f *fakeBackend) TransferLeadership(_ context.Context, id string) (WriteResult, error) {
	return f.record("TransferLeadership %s", id)
}
func (f *fakeBackend) DrainNode(_ context.Context, id string) (WriteResult, error) {
	return f.record("DrainNode %s", id)
}
func (f *fakeBackend) UndrainNode(_ context.Context, id string) (WriteResult, error) {
	return f.record("UndrainNode %s", id)
}
func (f *fakeBackend) RemoveNode(_ context.Context, id string) (WriteResult, error) {
	return f.record("RemoveNode %s", id)
}

func (f *fakeBackend) Mappings(context.Context) ([]Mapping, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []Mapping{{Name: "orders", Source: MappingFromAPI, Table: config.Table{Topic: "orders", Namespace: "db", Name: "orders",
		SnapshotMaxAge: config.Duration(168 * time.Hour)}}}, nil
}

func (f *fakeBackend) PutMapping(_ context.Context, m Mapping, create bool) (WriteResult, error) {
	f.mu.Lock()
	f.mapping = m
	f.mu.Unlock()
	return f.record("PutMapping %s %v", m.Name, create)
}
func (f *fakeBackend) DeleteMapping(_ context.Context, name string) (WriteResult, error) {
	return f.record("DeleteMapping %s", name)
}
func (f *fakeBackend) PauseTable(ctx context.Context, table string) (WriteResult, error) {
	f.mu.Lock()
	f.callers = append(f.callers, Caller(ctx))
	f.mu.Unlock()
	return f.record("PauseTable %s", table)
}
func (f *fakeBackend) ResumeTable(_ context.Context, table string, skip bool) (WriteResult, error) {
	return f.record("ResumeTable %s %v", table, skip)
}
func (f *fakeBackend) RewindTable(_ context.Context, req RewindRequest) (RewindResult, error) {
	f.mu.Lock()
	f.rewind = req
	f.mu.Unlock()
	r, err := f.record("RewindTable %s %s", req.Table, req.Policy)
	return RewindResult{Index: r.Index, Rewind: status.RewindReport{Generation: 2, Policy: req.Policy}}, err
}
func (f *fakeBackend) Snapshots(_ context.Context, table string) ([]SnapshotInfo, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []SnapshotInfo{{ID: 6, Sequence: 1}, {ID: 7, ParentID: 6, Sequence: 2, Current: true, Summary: map[string]string{"operation": "append"}}}, nil
}

func (f *fakeBackend) Samples(string) []status.Sample { return nil }

func (f *fakeBackend) DeadLetters(_ context.Context, table string, limit int) ([]DeadLetter, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []DeadLetter{{Topic: "orders", Partition: 1, Offset: 42, Error: "invalid JSON: unexpected end", Value: `{"broken":`, ValueBytes: 10}}, nil
}

func (f *fakeBackend) TableLayout(_ context.Context, table string) (TableLayout, error) {
	if f.err != nil {
		return TableLayout{}, f.err
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return TableLayout{FormatVersion: 2, SchemaID: 1, CurrentSnapshot: 7, Namespace: "db", Name: "orders",
		Location: "s3://wh/db/orders", MetadataLocation: "s3://wh/db/orders/metadata/00007.metadata.json", CatalogURL: "https://floe-1:7422/iceberg",
		Fields: []FieldInfo{{ID: 1, Name: "_kafka_partition", Type: "int", Required: true, Since: at},
			{ID: 9, Name: "customer.region", Type: "string", SinceSchema: 1, Since: at.Add(time.Hour)}},
		Spec:    []SpecField{{Name: "region", Source: "customer.region", Transform: "identity"}},
		Mapping: &config.Table{Topic: "orders", Format: "json", ErrorMode: "dlq", Namespace: "db", Name: "orders", Formats: []string{"iceberg", "delta"}}}, nil
}

const (
	readToken  = "read-token-0123456789"
	adminToken = "admin-token-0123456789"
)

func testTokens(t *testing.T) *auth.Tokens {
	t.Helper()
	tok, err := auth.Load("", readToken+":read,"+adminToken+":admin")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// startAPI serves b on a free port until the test ends.
func startAPI(t *testing.T, b Backend, opts Options) *Server {
	t.Helper()
	s, err := ListenAPI("127.0.0.1:0", b, opts)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

func dialGRPC(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func httpClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// do sends an HTTP request with an optional bearer token and returns the
// status and body.
func do(t *testing.T, c *http.Client, verb, url, body, token string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(verb, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", verb, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// field returns the value at a dotted path ("tables.0.rows") of decoded
// JSON, or "<missing>".
func field(v any, path string) string {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return "<missing>"
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i >= len(x) {
				return "<missing>"
			}
			v = x[i]
		default:
			return "<missing>"
		}
	}
	return fmt.Sprint(v)
}

// rpcCase is one RPC with its gRPC call and its HTTP route; want holds
// JSON paths of the answer (proto field names) and their values, and call
// is what the backend must have been asked.
type rpcCase struct {
	method     string
	grpc       func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error)
	verb, path string
	body       string
	want       map[string]string
	call       string
}

func rpcCases() []rpcCase {
	cl := func(cc *grpc.ClientConn) adminv1.ClusterServiceClient { return adminv1.NewClusterServiceClient(cc) }
	tb := func(cc *grpc.ClientConn) adminv1.TableServiceClient { return adminv1.NewTableServiceClient(cc) }
	written := map[string]string{"raft_index": "42", "unchanged": "false", "message": "done"}
	return []rpcCase{
		{method: adminv1.ClusterService_ListMembers_FullMethodName, verb: "GET", path: "/v1/cluster/members",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return cl(cc).ListMembers(ctx, &adminv1.ListMembersRequest{})
			},
			want: map[string]string{"leader": "n1", "members.0.id": "n1", "members.0.partitions": "3", "members.0.unreachable_seconds": "0",
				"members.0.upgrade_required": "false", "members.1.id": "n2", "members.1.upgrade_required": "true"}},
		{method: adminv1.ClusterService_GetLeader_FullMethodName, verb: "GET", path: "/v1/cluster/leader",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return cl(cc).GetLeader(ctx, &adminv1.GetLeaderRequest{})
			},
			want: map[string]string{"id": "n1", "admin_addr": ""}},
		{method: adminv1.ClusterService_TransferLeadership_FullMethodName, verb: "POST", path: "/v1/cluster/leader:transfer", body: `{"id":"n2"}`,
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return cl(cc).TransferLeadership(ctx, &adminv1.TransferLeadershipRequest{Id: "n2"})
			},
			want: written, call: "TransferLeadership n2"},
		{method: adminv1.ClusterService_DrainNode_FullMethodName, verb: "POST", path: "/v1/cluster/members/n2:drain",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return cl(cc).DrainNode(ctx, &adminv1.DrainNodeRequest{Id: "n2"})
			},
			want: written, call: "DrainNode n2"},
		{method: adminv1.ClusterService_UndrainNode_FullMethodName, verb: "POST", path: "/v1/cluster/members/n2:undrain",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return cl(cc).UndrainNode(ctx, &adminv1.UndrainNodeRequest{Id: "n2"})
			},
			want: written, call: "UndrainNode n2"},
		{method: adminv1.ClusterService_RemoveNode_FullMethodName, verb: "DELETE", path: "/v1/cluster/members/n2",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return cl(cc).RemoveNode(ctx, &adminv1.RemoveNodeRequest{Id: "n2"})
			},
			want: written, call: "RemoveNode n2"},
		{method: adminv1.TableService_ListMappings_FullMethodName, verb: "GET", path: "/v1/mappings",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).ListMappings(ctx, &adminv1.ListMappingsRequest{})
			},
			want: map[string]string{"mappings.0.name": "orders", "mappings.0.source": "api", "mappings.0.snapshot_max_age": "168h0m0s",
				"mappings.0.orphan_min_age": "", "mappings.0.topic_regex": ""}},
		{method: adminv1.TableService_GetMapping_FullMethodName, verb: "GET", path: "/v1/mappings/orders",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).GetMapping(ctx, &adminv1.GetMappingRequest{Name: "orders"})
			},
			want: map[string]string{"name": "orders", "namespace": "db", "table": "orders", "topic": "orders"}},
		{method: adminv1.TableService_CreateMapping_FullMethodName, verb: "POST", path: "/v1/mappings",
			body: `{"name":"m1","topic":"t","namespace":"db","table":"t1","snapshot_max_age":"24h","partition_by":[{"column":"_kafka_timestamp","transform":"day"}]}`,
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).CreateMapping(ctx, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "m1", Topic: "t", Namespace: "db", Table: "t1",
					SnapshotMaxAge: "24h", PartitionBy: []*adminv1.PartitionField{{Column: "_kafka_timestamp", Transform: "day"}}}})
			},
			want: written, call: "PutMapping m1 true"},
		{method: adminv1.TableService_UpdateMapping_FullMethodName, verb: "PUT", path: "/v1/mappings/m1",
			body: `{"topic":"t","namespace":"db","table":"t1","snapshot_max_age":"24h","partition_by":[{"column":"_kafka_timestamp","transform":"day"}]}`,
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).UpdateMapping(ctx, &adminv1.UpdateMappingRequest{Mapping: &adminv1.Mapping{Name: "m1", Topic: "t", Namespace: "db", Table: "t1",
					SnapshotMaxAge: "24h", PartitionBy: []*adminv1.PartitionField{{Column: "_kafka_timestamp", Transform: "day"}}}})
			},
			want: written, call: "PutMapping m1 false"},
		{method: adminv1.TableService_DeleteMapping_FullMethodName, verb: "DELETE", path: "/v1/mappings/m1",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).DeleteMapping(ctx, &adminv1.DeleteMappingRequest{Name: "m1"})
			},
			want: written, call: "DeleteMapping m1"},
		{method: adminv1.TableService_ListTables_FullMethodName, verb: "GET", path: "/v1/tables",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).ListTables(ctx, &adminv1.ListTablesRequest{})
			},
			want: map[string]string{"tables.0.table": "db.orders", "tables.0.paused": "true", "tables.0.rows": "42",
				"tables.0.partitions.0.lag": "19", "tables.0.partitions.0.lag_seconds": "2.5", "tables.0.catalogs.0.in_sync": "true",
				"tables.0.rewind.policy": "REPLACE", "tables.0.last_commit": "2023-11-14T22:13:20Z"}},
		{method: adminv1.TableService_GetTable_FullMethodName, verb: "GET", path: "/v1/tables/db.orders",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).GetTable(ctx, &adminv1.GetTableRequest{Table: "db.orders"})
			},
			want: map[string]string{"table": "db.orders", "state": "RUNNING", "data_files": "0", "rewind.describe": "replaced"}},
		{method: adminv1.TableService_PauseTable_FullMethodName, verb: "POST", path: "/v1/tables/db.orders:pause",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).PauseTable(ctx, &adminv1.PauseTableRequest{Table: "db.orders"})
			},
			want: written, call: "PauseTable db.orders"},
		{method: adminv1.TableService_ResumeTable_FullMethodName, verb: "POST", path: "/v1/tables/db.orders:resume", body: `{"skip":true}`,
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).ResumeTable(ctx, &adminv1.ResumeTableRequest{Table: "db.orders", Skip: true})
			},
			want: written, call: "ResumeTable db.orders true"},
		{method: adminv1.TableService_RewindTable_FullMethodName, verb: "POST", path: "/v1/tables/db.orders:rewind", body: `{"earliest":true,"policy":"REPLACE"}`,
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).RewindTable(ctx, &adminv1.RewindTableRequest{Table: "db.orders",
					Target: &adminv1.RewindTableRequest_Earliest{Earliest: true}, Policy: adminv1.ReplayPolicy_REPLACE})
			},
			want: map[string]string{"raft_index": "42", "rewind.generation": "2", "rewind.policy": "REPLACE"}, call: "RewindTable db.orders replace"},
		{method: adminv1.TableService_ListSnapshots_FullMethodName, verb: "GET", path: "/v1/tables/db.orders/snapshots",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).ListSnapshots(ctx, &adminv1.ListSnapshotsRequest{Table: "db.orders"})
			},
			want: map[string]string{"current_snapshot_id": "7", "snapshots.0.snapshot_id": "6", "snapshots.1.parent_snapshot_id": "6",
				"snapshots.1.summary.operation": "append"}},
		{method: adminv1.TableService_RunMaintenance_FullMethodName, verb: "POST", path: "/v1/tables/db.orders:maintain",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return tb(cc).RunMaintenance(ctx, &adminv1.RunMaintenanceRequest{Table: "db.orders"})
			},
			want: map[string]string{"result_json": `{"expired":3}`, "node": "n1"}, call: "Maintain db.orders"},
		{method: adminv1.HealthService_Check_FullMethodName, verb: "GET", path: "/v1/health",
			grpc: func(ctx context.Context, cc *grpc.ClientConn) (proto.Message, error) {
				return adminv1.NewHealthServiceClient(cc).Check(ctx, &adminv1.HealthCheckRequest{})
			},
			want: map[string]string{"live": "true", "ready": "true", "reason": "", "node": "n1", "leader": "n1", "state": ""}},
	}
}

// protoJSON renders an answer as the gateway does, so gRPC and HTTP
// answers are checked alike.
func protoJSON(t *testing.T, m proto.Message) any {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func checkAnswer(t *testing.T, how string, c rpcCase, v any, f *fakeBackend) {
	t.Helper()
	for path, want := range c.want {
		if got := field(v, path); got != want {
			t.Errorf("%s %s: %s = %q, want %q", how, c.method, path, got, want)
		}
	}
	if c.call != "" {
		if got := f.lastCall(); got != c.call {
			t.Errorf("%s %s: backend got %q, want %q", how, c.method, got, c.call)
		}
	}
}

func withToken(ctx context.Context, tok string) context.Context {
	if tok == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

// TestEveryRPC calls every RPC over gRPC and over its HTTP route and
// checks the answers and what the backend was asked.
func TestEveryRPC(t *testing.T) {
	f := &fakeBackend{}
	s := startAPI(t, f, Options{})
	cc := dialGRPC(t, s.Addr())
	hc := httpClient(t)
	ctx := context.Background()
	covered := map[string]bool{}
	for _, c := range rpcCases() {
		covered[c.method] = true
		out, err := c.grpc(ctx, cc)
		if err != nil {
			t.Errorf("gRPC %s: %v", c.method, err)
		} else {
			checkAnswer(t, "gRPC", c, protoJSON(t, out), f)
		}
		code, _, body := do(t, hc, c.verb, "http://"+s.Addr()+c.path, c.body, "")
		if code != http.StatusOK {
			t.Errorf("HTTP %s %s = %d: %s", c.verb, c.path, code, body)
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("HTTP %s %s: %v: %s", c.verb, c.path, err, body)
			continue
		}
		checkAnswer(t, "HTTP", c, v, f)
	}
	for name := range methodScopes {
		if !covered[name] {
			t.Errorf("no test case for %s", name)
		}
	}
	// The mapping and rewind converted on the way in.
	m := f.mapping
	if m.Table.Name != "t1" || m.Table.Namespace != "db" || m.Table.SnapshotMaxAge.D() != 24*time.Hour ||
		len(m.Table.PartitionBy) != 1 || m.Table.PartitionBy[0].Transform != "day" {
		t.Errorf("mapping reached the backend as %+v", m)
	}
	if r := f.rewind; !r.Earliest || r.Latest || r.Policy != ReplayReplace || r.Table != "db.orders" {
		t.Errorf("rewind reached the backend as %+v", r)
	}
}

// TestErrorMapping checks that backend sentinels become the right gRPC
// codes and HTTP statuses, with messages naming the field.
func TestErrorMapping(t *testing.T) {
	f := &fakeBackend{}
	s := startAPI(t, f, Options{})
	cc := dialGRPC(t, s.Addr())
	hc := httpClient(t)
	for _, c := range []struct {
		err  error
		code codes.Code
		http int
	}{
		{fmt.Errorf("%w: mapping.topic: required", ErrInvalid), codes.InvalidArgument, 400},
		{fmt.Errorf("member n2: %w", ErrNotFound), codes.NotFound, 404},
		{fmt.Errorf("mapping m1: %w", ErrExists), codes.AlreadyExists, 409},
		{fmt.Errorf("mapping m1 is from configuration: %w", ErrConflict), codes.FailedPrecondition, 400},
		{fmt.Errorf("no leader: %w", ErrUnavailable), codes.Unavailable, 503},
		{fmt.Errorf("forwarding: %w", context.DeadlineExceeded), codes.DeadlineExceeded, 504},
		{fmt.Errorf("%w: %w", ErrConflict, UpgradeError{errors.New("rewind needs protocol level 3; the group's minimum is 2 (lagging: n2 at level 2): finish the rolling upgrade first")}), codes.FailedPrecondition, 400},
		{fmt.Errorf("%w: %w", ErrUnavailable, UpgradeError{errors.New("upgrade required: log entry 9 has command type 40")}), codes.Unavailable, 503},
		{errors.New("disk on fire"), codes.Internal, 500},
	} {
		f.mu.Lock()
		f.err = c.err
		f.mu.Unlock()
		_, err := adminv1.NewClusterServiceClient(cc).DrainNode(context.Background(), &adminv1.DrainNodeRequest{Id: "n2"})
		st := grpcstatus.Convert(err)
		if st.Code() != c.code || st.Message() != c.err.Error() {
			t.Errorf("gRPC for %v: %v %q", c.err, st.Code(), st.Message())
		}
		// An answer a rolling upgrade explains says so in a detail
		// clients can match on; no other answer carries one.
		upgrade := errors.Is(c.err, ErrUpgradeRequired)
		var reasons []string
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				reasons = append(reasons, info.GetDomain()+"/"+info.GetReason())
			}
		}
		if got := strings.Join(reasons, ","); (upgrade && got != "floe.io/UPGRADE_REQUIRED") || (!upgrade && got != "") {
			t.Errorf("gRPC details for %v: %q", c.err, got)
		}
		code, _, body := do(t, hc, "POST", "http://"+s.Addr()+"/v1/cluster/members/n2:drain", "", "")
		var v any
		_ = json.Unmarshal(body, &v)
		if code != c.http || field(v, "message") != c.err.Error() || strings.Contains(string(body), `"UPGRADE_REQUIRED"`) != upgrade {
			t.Errorf("HTTP for %v: %d %s", c.err, code, body)
		}
	}
	f.mu.Lock()
	f.err = nil
	f.mu.Unlock()

	// Request checks of the API itself.
	tb := adminv1.NewTableServiceClient(cc)
	for _, c := range []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"unknown mapping", func() error {
			_, err := tb.GetMapping(context.Background(), &adminv1.GetMappingRequest{Name: "nope"})
			return err
		}, codes.NotFound, `mapping "nope" not found`},
		{"unknown table", func() error {
			_, err := tb.GetTable(context.Background(), &adminv1.GetTableRequest{Table: "db.nope"})
			return err
		}, codes.NotFound, `table "db.nope" not found`},
		{"no mapping", func() error {
			_, err := tb.CreateMapping(context.Background(), &adminv1.CreateMappingRequest{})
			return err
		}, codes.InvalidArgument, "mapping"},
		{"no name", func() error {
			_, err := tb.CreateMapping(context.Background(), &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Topic: "t"}})
			return err
		}, codes.InvalidArgument, "mapping.name: required"},
		{"bad duration", func() error {
			_, err := tb.UpdateMapping(context.Background(), &adminv1.UpdateMappingRequest{Mapping: &adminv1.Mapping{Name: "m", SnapshotMaxAge: "x"}})
			return err
		}, codes.InvalidArgument, `mapping.snapshot_max_age: "x" is not a duration`},
		{"bad orphan age", func() error {
			_, err := tb.UpdateMapping(context.Background(), &adminv1.UpdateMappingRequest{Mapping: &adminv1.Mapping{Name: "m", OrphanMinAge: "1 day"}})
			return err
		}, codes.InvalidArgument, `mapping.orphan_min_age: "1 day" is not a duration`},
		{"rewind without target", func() error {
			_, err := tb.RewindTable(context.Background(), &adminv1.RewindTableRequest{Table: "db.orders", Policy: adminv1.ReplayPolicy_APPEND})
			return err
		}, codes.InvalidArgument, "target"},
		{"rewind without policy", func() error {
			_, err := tb.RewindTable(context.Background(), &adminv1.RewindTableRequest{Table: "db.orders", Target: &adminv1.RewindTableRequest_Latest{Latest: true}})
			return err
		}, codes.InvalidArgument, "policy"},
		{"pause without table", func() error {
			_, err := tb.PauseTable(context.Background(), &adminv1.PauseTableRequest{})
			return err
		}, codes.InvalidArgument, "table: required"},
	} {
		st := grpcstatus.Convert(c.call())
		if st.Code() != c.code || !strings.Contains(st.Message(), c.want) {
			t.Errorf("%s: %v %q, want %v containing %q", c.name, st.Code(), st.Message(), c.code, c.want)
		}
	}

	// HTTP requests that are wrong must be 4xx, never 5xx.
	for _, c := range []struct {
		verb, path, body string
		want             int
	}{
		{"GET", "/v1/nope", "", 404},
		{"GET", "/v1/tables/db.orders/nope", "", 404},
		{"GET", "/v1/mappings/nope", "", 404},
		{"PATCH", "/v1/mappings", `{}`, 405},
		{"POST", "/v1/mappings", `{`, 400},
		{"POST", "/v1/mappings", `{"name":"m","bogus":1}`, 400},
		{"POST", "/v1/mappings", `{"name":7}`, 400},
		{"POST", "/v1/mappings", `{"name":"m","snapshot_max_age":"x"}`, 400},
		{"POST", "/v1/tables/db.orders:rewind", `{"policy":"SIDEWAYS"}`, 400},
		{"POST", "/v1/tables/db.orders:rewind", `{"earliest":true,"latest":true,"policy":"APPEND"}`, 400},
		{"POST", "/v1/tables/db.orders:rewind", `{"policy":"APPEND"}`, 400},
		{"POST", "/v1/cluster/leader:transfer", `[]`, 400},
		{"GET", "/v1/tables?bogus=1", "", 200}, // unknown query parameters are ignored
		{"GET", "/v1/tables/%ff", "", 404},
		{"GET", "/v1/mappings/%ff", "", 404},
	} {
		code, _, body := do(t, hc, c.verb, "http://"+s.Addr()+c.path, c.body, "")
		if code != c.want {
			t.Errorf("%s %s %s = %d, want %d: %s", c.verb, c.path, c.body, code, c.want, body)
		}
	}
}

// TestHealthShowsUpgradeRequired: a node halted at a command its build does
// not know says UPGRADE_REQUIRED in its health answer, over gRPC and HTTP,
// as GET /v1/status does.
func TestHealthShowsUpgradeRequired(t *testing.T) {
	f := &fakeBackend{node: status.NodeUpgradeRequired, readyErr: errors.New("upgrade required: log entry 9 has command type 40")}
	s := startAPI(t, f, Options{})
	out, err := adminv1.NewHealthServiceClient(dialGRPC(t, s.Addr())).Check(context.Background(), &adminv1.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if out.GetState() != "UPGRADE_REQUIRED" || out.GetReady() {
		t.Fatalf("gRPC health: state %q ready %v", out.GetState(), out.GetReady())
	}
	code, _, body := do(t, httpClient(t), "GET", "http://"+s.Addr()+"/v1/health", "", "")
	var v any
	_ = json.Unmarshal(body, &v)
	if code != http.StatusOK || field(v, "state") != "UPGRADE_REQUIRED" {
		t.Fatalf("HTTP health: %d %s", code, body)
	}
}
