package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

const (
	apiAdminToken = "api-test-admin-token-0123456789"
	apiReadToken  = "api-test-read-token-0123456789"
)

// apiOp is one admin API operation, callable over gRPC (method) and over
// HTTP (verb and path, body = the request as JSON when set).
type apiOp struct {
	method string // full gRPC method
	verb   string
	path   string
	body   bool
}

// apiTransport calls an operation over gRPC or HTTP and maps the answer to
// a gRPC code, so one test drives both.
type apiTransport interface {
	call(op apiOp, token string, req, resp proto.Message) (codes.Code, string)
	name() string
}

type grpcTransport struct{ conn *grpc.ClientConn }

func (g grpcTransport) name() string { return "grpc" }

func (g grpcTransport) call(op apiOp, token string, req, resp proto.Message) (codes.Code, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	err := g.conn.Invoke(ctx, op.method, req, resp)
	st := status.Convert(err)
	return st.Code(), st.Message()
}

type httpTransport struct{ base string }

func (h httpTransport) name() string { return "http" }

var httpCodes = map[int]codes.Code{
	200: codes.OK, 400: codes.InvalidArgument, 401: codes.Unauthenticated, 403: codes.PermissionDenied,
	404: codes.NotFound, 409: codes.AlreadyExists, 503: codes.Unavailable, 504: codes.DeadlineExceeded,
}

func (h httpTransport) call(op apiOp, token string, req, resp proto.Message) (codes.Code, string) {
	var body io.Reader
	if op.body {
		// body: mapping (admin_http.yaml): the mapping is the whole body.
		switch r := req.(type) {
		case *adminv1.CreateMappingRequest:
			req = r.Mapping
		case *adminv1.UpdateMappingRequest:
			req = r.Mapping
		}
		b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
		if err != nil {
			return codes.Internal, err.Error()
		}
		body = bytes.NewReader(b)
	}
	hr, err := http.NewRequest(op.verb, h.base+op.path, body)
	if err != nil {
		return codes.Internal, err.Error()
	}
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	r, err := http.DefaultClient.Do(hr)
	if err != nil {
		return codes.Unavailable, err.Error()
	}
	defer r.Body.Close()
	data, _ := io.ReadAll(r.Body)
	code, ok := httpCodes[r.StatusCode]
	if !ok {
		return codes.Internal, fmt.Sprintf("HTTP %d: %s", r.StatusCode, data)
	}
	if code != codes.OK {
		// The gateway's error body carries the gRPC code; 400 stands for
		// both InvalidArgument and FailedPrecondition.
		var e struct {
			Code int `json:"code"`
		}
		if json.Unmarshal(data, &e) == nil && e.Code != 0 {
			if grpcCode := codes.Code(e.Code); httpCodes[r.StatusCode] == grpcCode || (r.StatusCode == 400 && grpcCode == codes.FailedPrecondition) {
				return grpcCode, string(data)
			}
			return codes.Internal, fmt.Sprintf("HTTP %d with gRPC code %d: %s", r.StatusCode, e.Code, data)
		}
		return code, string(data)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, resp); err != nil {
		return codes.Internal, fmt.Sprintf("decoding %s: %v", data, err)
	}
	return codes.OK, ""
}

// startAPITrio starts three in-process nodes that form one group (n1
// bootstraps, n2 and n3 join), all with the same tokens, and waits for three
// voters.
func startAPITrio(t *testing.T, brokers []string) []*node.Node {
	t.Helper()
	nodes, _ := startTrio(t, brokers)
	return nodes
}

// startTrio is startAPITrio that also returns each node's configuration,
// to restart it on its data dir.
func startTrio(t *testing.T, brokers []string) ([]*node.Node, []config.Config) {
	t.Helper()
	dir := t.TempDir()
	var nodes []*node.Node
	var cfgs []config.Config
	var join []string
	for i := range 3 {
		cfg := testnode.Config(t, dir, brokers, []config.Table{{Topic: "cfg_topic", Namespace: "api"}})
		cfg.Node.ID = fmt.Sprintf("n%d", i+1)
		cfg.Node.DataDir = fmt.Sprintf("%s/node%d", dir, i+1)
		cfg.Auth.Tokens = apiAdminToken + ":admin," + apiReadToken + ":read"
		cfg.Cluster.FailureTimeout = config.Duration(2 * time.Second)
		if i > 0 {
			cfg.Cluster.BootstrapExpect, cfg.Cluster.Join = 0, join
		}
		n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Stop() })
		nodes, cfgs = append(nodes, n), append(cfgs, cfg)
		join = append(join, n.Raft().RPCAddr())
	}
	wait.Until(t, time.Minute, "the group to reach 3 voters", func() error {
		voters := 0
		for _, m := range nodes[0].Members() {
			if m.Role == "leader" || m.Role == "voter" {
				voters++
			}
		}
		if voters != 3 {
			return fmt.Errorf("%d voters: %+v", voters, nodes[0].Members())
		}
		return nil
	})
	return nodes, cfgs
}

// leaderNow is the id of the one leader every node knows now,
// "" when they disagree or none leads.
func leaderNow(nodes []*node.Node) (string, bool) {
	leader := ""
	for _, n := range nodes {
		if n.Raft().IsLeader() {
			if leader != "" {
				return "", false
			}
			leader = n.ID()
		}
	}
	for _, n := range nodes {
		if _, id := n.Raft().Leader(); id != leader {
			return "", false
		}
	}
	return leader, leader != ""
}

func leaderAndFollower(t *testing.T, nodes []*node.Node) (leader, follower *node.Node) {
	t.Helper()
	// One leader that every node knows: right after a transfer the old
	// leader may still say it leads for a moment, and a write sent to it
	// then is refused as "not the raft leader".
	wait.For(t, 30*time.Second, "a leader every node knows", func() bool {
		leader = nil
		for _, n := range nodes {
			if n.Raft().IsLeader() {
				if leader != nil {
					return false
				}
				leader = n
			}
		}
		if leader == nil {
			return false
		}
		for _, n := range nodes {
			if _, id := n.Raft().Leader(); id != leader.ID() {
				return false
			}
		}
		return true
	})
	for _, n := range nodes {
		if n != leader {
			follower = n
			break
		}
	}
	return leader, follower
}

// TestAdminAPI drives every admin API operation through gRPC and through
// the HTTP gateway, sent to the leader and to a follower (which forwards
// writes), on a 3-node group with bearer tokens: mappings made through the
// API route a topic into a table that fills; writes answer with their Raft
// index; an identical create is not an error; errors name the field; read
// tokens cannot write; no token reaches nothing but health and metrics.
func TestAdminAPI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	var topics []string
	for _, tr := range []string{"grpc", "http"} {
		for _, role := range []string{"leader", "follower"} {
			topics = append(topics, "api_"+tr+"_"+role)
		}
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, append(topics, "cfg_topic")...)})
	nodes := startAPITrio(t, kc.ListenAddrs())
	leader, follower := leaderAndFollower(t, nodes)

	for _, role := range []string{"leader", "follower"} {
		target := leader
		if role == "follower" {
			target = follower
		}
		conn, err := grpc.NewClient(target.AdminAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, tr := range []apiTransport{grpcTransport{conn}, httpTransport{"http://" + target.AdminAddr()}} {
			t.Run(tr.name()+"/"+role, func(t *testing.T) {
				apiRoundTrip(t, tr, cl, nodes, "api_"+tr.name()+"_"+role, leader.ID())
			})
		}
	}

	// Cluster writes, each sent through every transport to a follower and
	// the leader: leadership moves every time.
	t.Run("transfer leadership", func(t *testing.T) {
		for _, role := range []string{"leader", "follower"} {
			for _, trName := range []string{"grpc", "http"} {
				l, f := leaderAndFollower(t, nodes)
				target := l
				if role == "follower" {
					target = f
				}
				tr := transportTo(t, target, trName)
				var resp adminv1.WriteResponse
				code, msg := tr.call(apiOp{"/floe.admin.v1.ClusterService/TransferLeadership", "POST", "/v1/cluster/leader:transfer", true}, apiAdminToken, &adminv1.TransferLeadershipRequest{}, &resp)
				if code != codes.OK {
					t.Fatalf("%s via %s: %s %s", trName, role, code, msg)
				}
				if nl, _ := leaderAndFollower(t, nodes); nl == l {
					t.Fatalf("%s via %s: %s still leads", trName, role, l.ID())
				}
			}
		}
	})

	t.Run("drain and remove", func(t *testing.T) {
		l, _ := leaderAndFollower(t, nodes)
		var others []*node.Node
		for _, n := range nodes {
			if n != l {
				others = append(others, n)
			}
		}
		victim, via := others[0], others[1]
		for _, trName := range []string{"grpc", "http"} {
			for _, target := range []*node.Node{l, via} {
				tr := transportTo(t, target, trName)
				var resp adminv1.WriteResponse
				code, msg := tr.call(apiOp{"/floe.admin.v1.ClusterService/DrainNode", "POST", "/v1/cluster/members/" + victim.ID() + ":drain", false}, apiAdminToken, &adminv1.DrainNodeRequest{Id: victim.ID()}, &resp)
				if code != codes.OK || resp.RaftIndex == 0 {
					t.Fatalf("drain via %s %s: %s %s %+v", trName, target.ID(), code, msg, &resp)
				}
				code, _ = tr.call(apiOp{"/floe.admin.v1.ClusterService/RemoveNode", "DELETE", "/v1/cluster/members/ghost", false}, apiAdminToken, &adminv1.RemoveNodeRequest{Id: "ghost"}, &resp)
				if code != codes.NotFound {
					t.Fatalf("removing an unknown node via %s: %s", trName, code)
				}
			}
		}
		waitMember(t, l, victim.ID(), func(draining bool, present bool) bool { return present && draining })
		// Remove the drained node for good, through a follower over gRPC
		// (forwarded to the leader) once it is stopped.
		_ = victim.Stop()
		var resp adminv1.WriteResponse
		code, msg := transportTo(t, via, "grpc").call(apiOp{"/floe.admin.v1.ClusterService/RemoveNode", "DELETE", "", false}, apiAdminToken, &adminv1.RemoveNodeRequest{Id: victim.ID()}, &resp)
		if code != codes.OK {
			t.Fatalf("remove via a follower: %s %s", code, msg)
		}
		waitMember(t, l, victim.ID(), func(_ bool, present bool) bool { return !present })
	})
}

func transportTo(t *testing.T, n *node.Node, name string) apiTransport {
	t.Helper()
	if name == "http" {
		return httpTransport{"http://" + n.AdminAddr()}
	}
	conn, err := grpc.NewClient(n.AdminAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return grpcTransport{conn}
}

func waitMember(t *testing.T, n *node.Node, id string, ok func(draining, present bool) bool) {
	t.Helper()
	wait.Until(t, 30*time.Second, "member "+id, func() error {
		draining, present := false, false
		for _, m := range n.Members() {
			if m.ID == id {
				present, draining = true, m.Draining
			}
		}
		if !ok(draining, present) {
			return fmt.Errorf("present %v draining %v", present, draining)
		}
		return nil
	})
}

// apiRoundTrip runs every mapping, table and health operation through one
// transport to one node.
func apiRoundTrip(t *testing.T, tr apiTransport, cl *kgo.Client, nodes []*node.Node, topic, leaderID string) {
	name := "m-" + strings.ReplaceAll(topic, "_", "-")
	table := "api." + topic
	call := func(op apiOp, req, resp proto.Message) {
		t.Helper()
		if code, msg := tr.call(op, apiAdminToken, req, resp); code != codes.OK {
			t.Fatalf("%s: %s %s", op.method, code, msg)
		}
	}
	expect := func(op apiOp, token string, req proto.Message, want codes.Code, msgHas string) {
		t.Helper()
		code, msg := tr.call(op, token, req, &adminv1.WriteResponse{})
		if code != want || !strings.Contains(msg, msgHas) {
			t.Fatalf("%s: %s %q, want %s with %q", op.method, code, msg, want, msgHas)
		}
	}
	var (
		health  adminv1.HealthCheckResponse
		members adminv1.ListMembersResponse
		leader  adminv1.GetLeaderResponse
		write   adminv1.WriteResponse
	)
	healthOp := apiOp{"/floe.admin.v1.HealthService/Check", "GET", "/v1/health", false}
	if code, msg := tr.call(healthOp, "", &adminv1.HealthCheckRequest{}, &health); code != codes.OK || !health.Ready || !health.Live {
		t.Fatalf("health without a token: %s %s %+v", code, msg, &health)
	}
	// The leader the test started with, or the one the group elected since
	// (a loaded machine can miss a heartbeat): the answers must agree with
	// the leader every node knows at the time.
	wait.Until(t, 30*time.Second, "members and leader answered as the nodes see them", func() error {
		want, _ := leaderNow(nodes)
		if want == "" {
			return fmt.Errorf("no leader every node knows")
		}
		call(apiOp{"/floe.admin.v1.ClusterService/ListMembers", "GET", "/v1/cluster/members", false}, &adminv1.ListMembersRequest{}, &members)
		if len(members.Members) != 3 || members.Leader != want {
			return fmt.Errorf("members %+v, leader %s (started with %s)", &members, want, leaderID)
		}
		call(apiOp{"/floe.admin.v1.ClusterService/GetLeader", "GET", "/v1/cluster/leader", false}, &adminv1.GetLeaderRequest{}, &leader)
		if leader.Id != want || !strings.HasPrefix(leader.AdminAddr, "127.0.0.1:") || leader.Since == nil {
			return fmt.Errorf("leader %+v, want %s with its admin address and the time of the change", &leader, want)
		}
		return nil
	})

	// Mappings.
	m := &adminv1.Mapping{Name: name, Topic: topic, Namespace: "api"}
	create := apiOp{"/floe.admin.v1.TableService/CreateMapping", "POST", "/v1/mappings", true}
	call(create, &adminv1.CreateMappingRequest{Mapping: m}, &write)
	if write.RaftIndex == 0 || write.Unchanged {
		t.Fatalf("create: %+v", &write)
	}
	call(create, &adminv1.CreateMappingRequest{Mapping: m}, &write)
	if !write.Unchanged {
		t.Fatalf("an identical create: %+v, want unchanged", &write)
	}
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: name, Topic: "other", Namespace: "api"}}, codes.AlreadyExists, name)
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: name + "-bad", Topic: topic, Format: "xml"}}, codes.InvalidArgument, "mapping.format")
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: "bad name!", Topic: topic}}, codes.InvalidArgument, "mapping.name")
	// Names that reach the Raft log are bounded on the receiving node: a
	// 300-character table name, a NUL byte, a 3 MB namespace (under the
	// 4 MiB body cap, so the name rule answers).
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: name + "-long", Topic: topic, Namespace: "api", Table: strings.Repeat("t", 300)}}, codes.InvalidArgument, "mapping.table: after expansion (placeholders as x): 300 bytes, longer than 255")
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: name + "-nul", Topic: topic, Namespace: "a\x00pi"}}, codes.InvalidArgument, "mapping.namespace: control character U+0000")
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: name + "-big", Topic: topic, Namespace: strings.Repeat("n", 3<<20)}}, codes.InvalidArgument, "mapping.namespace: 3145728 bytes, longer than 1024")
	// An error repeats the start of an oversized input, not all of it.
	expect(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: &adminv1.Mapping{Name: strings.Repeat("m", 2000), Topic: topic}}, codes.InvalidArgument, "...: use 1 to 128")
	expect(create, apiReadToken, &adminv1.CreateMappingRequest{Mapping: m}, codes.PermissionDenied, "")
	expect(create, "", &adminv1.CreateMappingRequest{Mapping: m}, codes.Unauthenticated, "")
	var got adminv1.Mapping
	call(apiOp{"/floe.admin.v1.TableService/GetMapping", "GET", "/v1/mappings/" + name, false}, &adminv1.GetMappingRequest{Name: name}, &got)
	if got.Topic != topic || got.Source != "api" || got.Format != "json" {
		t.Fatalf("get mapping: %+v", &got)
	}
	var list adminv1.ListMappingsResponse
	if code, msg := tr.call(apiOp{"/floe.admin.v1.TableService/ListMappings", "GET", "/v1/mappings", false}, apiReadToken, &adminv1.ListMappingsRequest{}, &list); code != codes.OK {
		t.Fatalf("list mappings with a read token: %s %s", code, msg)
	}
	var sawAPI, sawConfig bool
	for _, x := range list.Mappings {
		sawAPI = sawAPI || x.Name == name
		sawConfig = sawConfig || (x.Name == "tables[0]" && x.Source == "config")
	}
	if !sawAPI || !sawConfig {
		t.Fatalf("list mappings: %+v", &list)
	}
	got.SnapshotMaxCount = 7
	call(apiOp{"/floe.admin.v1.TableService/UpdateMapping", "PUT", "/v1/mappings/" + name, true}, &adminv1.UpdateMappingRequest{Mapping: &got}, &write)
	if write.RaftIndex == 0 {
		t.Fatalf("update: %+v", &write)
	}
	expect(apiOp{"/floe.admin.v1.TableService/UpdateMapping", "PUT", "/v1/mappings/tables[0]", true}, apiAdminToken,
		&adminv1.UpdateMappingRequest{Mapping: &adminv1.Mapping{Name: "tables[0]", Topic: "cfg_topic"}}, codes.FailedPrecondition, "configuration")

	// The API mapping routes the topic into a table.
	produceN(t, cl, topic, 0, 50)
	waitAPIRows(t, tr, table, 50)
	var tables adminv1.ListTablesResponse
	call(apiOp{"/floe.admin.v1.TableService/ListTables", "GET", "/v1/tables", false}, &adminv1.ListTablesRequest{}, &tables)
	found := false
	for _, x := range tables.Tables {
		found = found || x.Table == table
	}
	if !found {
		t.Fatalf("list tables lacks %s", table)
	}
	var snaps adminv1.ListSnapshotsResponse
	call(apiOp{"/floe.admin.v1.TableService/ListSnapshots", "GET", "/v1/tables/" + table + "/snapshots", false}, &adminv1.ListSnapshotsRequest{Table: table}, &snaps)
	if len(snaps.Snapshots) == 0 || snaps.CurrentSnapshotId == 0 {
		t.Fatalf("snapshots: %+v", &snaps)
	}

	// Pause: the table stops; resume: the records produced meanwhile land.
	call(apiOp{"/floe.admin.v1.TableService/PauseTable", "POST", "/v1/tables/" + table + ":pause", false}, &adminv1.PauseTableRequest{Table: table}, &write)
	if write.RaftIndex == 0 {
		t.Fatalf("pause: %+v", &write)
	}
	// The answer means the pause is committed; every node's pipelines stop
	// as soon as they apply it, moments later.
	wait.Until(t, 30*time.Second, "the pause to show", func() error {
		st := getAPITable(t, tr, table)
		if !st.Paused || st.State != "SUSPENDED" || !strings.Contains(st.Reason, "paused") {
			return fmt.Errorf("state %s paused %v reason %q", st.State, st.Paused, st.Reason)
		}
		return nil
	})
	for _, n := range nodes {
		wait.For(t, 30*time.Second, "the pause to reach "+n.ID(), func() bool {
			rep, err := n.Report(context.Background())
			tr, ok := tableReport(rep, table)
			return err == nil && ok && tr.Paused
		})
	}
	produceN(t, cl, topic, 50, 20)
	// The proof a running table would have taken them by now: records
	// produced after them to the configured table, through the same
	// brokers and nodes, are committed.
	cfgRows := func() int64 {
		ct, _ := tableReport(mustReport(t, nodes[0]), "api.cfg_topic")
		return ct.Rows
	}
	before := cfgRows()
	produceN(t, cl, "cfg_topic", 0, 5)
	wait.For(t, time.Minute, "records produced later to api.cfg_topic to be committed", func() bool { return cfgRows() >= before+5 })
	if st := getAPITable(t, tr, table); st.Rows != 50 {
		t.Fatalf("a paused table took records: %d rows", st.Rows)
	}
	call(apiOp{"/floe.admin.v1.TableService/ResumeTable", "POST", "/v1/tables/" + table + ":resume", true}, &adminv1.ResumeTableRequest{Table: table}, &write)
	if write.RaftIndex == 0 {
		t.Fatalf("resume: %+v", &write)
	}
	waitAPIRows(t, tr, table, 70)

	var maint adminv1.RunMaintenanceResponse
	call(apiOp{"/floe.admin.v1.TableService/RunMaintenance", "POST", "/v1/tables/" + table + ":maintain", false}, &adminv1.RunMaintenanceRequest{Table: table}, &maint)
	if !strings.Contains(maint.ResultJson, "snapshots_expired") {
		t.Fatalf("maintenance: %+v", &maint)
	}

	// Rewind partition 0 to its start with the append policy.
	var rw adminv1.RewindTableResponse
	call(apiOp{"/floe.admin.v1.TableService/RewindTable", "POST", "/v1/tables/" + table + ":rewind", true}, &adminv1.RewindTableRequest{Table: table,
		Target: &adminv1.RewindTableRequest_Offsets{Offsets: &adminv1.ExplicitOffsets{Offsets: []*adminv1.PartitionOffset{{Topic: topic, Partition: 0, Offset: 0}}}},
		Policy: adminv1.ReplayPolicy_APPEND}, &rw)
	if rw.RaftIndex == 0 || rw.Rewind.GetGeneration() != 1 {
		t.Fatalf("rewind: %+v", &rw)
	}
	waitAPIRows(t, tr, table, 70+35) // partition 0 holds 35 of the 70 records
	expect(apiOp{"/floe.admin.v1.TableService/RewindTable", "POST", "/v1/tables/" + table + ":rewind", true}, apiAdminToken,
		&adminv1.RewindTableRequest{Table: table, Target: &adminv1.RewindTableRequest_Earliest{Earliest: true}}, codes.InvalidArgument, "policy")

	expect(apiOp{"/floe.admin.v1.TableService/GetTable", "GET", "/v1/tables/api.nope", false}, apiAdminToken, &adminv1.GetTableRequest{Table: "api.nope"}, codes.NotFound, "api.nope")
	call(apiOp{"/floe.admin.v1.TableService/DeleteMapping", "DELETE", "/v1/mappings/" + name, false}, &adminv1.DeleteMappingRequest{Name: name}, &write)
	if write.RaftIndex == 0 {
		t.Fatalf("delete: %+v", &write)
	}
	// Its table stays, with its data, and says why nothing flows into it.
	wait.Until(t, 30*time.Second, "the table to show UNMAPPED", func() error {
		if st := getAPITable(t, tr, table); st.State != "UNMAPPED" || st.Rows == 0 {
			return fmt.Errorf("state %s rows %d reason %q", st.State, st.Rows, st.Reason)
		}
		return nil
	})
	expect(apiOp{"/floe.admin.v1.TableService/GetMapping", "GET", "/v1/mappings/" + name, false}, apiAdminToken, &adminv1.GetMappingRequest{Name: name}, codes.NotFound, name)
	// Said once: "not found: deleting mapping x: no such mapping".
	expect(apiOp{"/floe.admin.v1.TableService/DeleteMapping", "DELETE", "/v1/mappings/" + name, false}, apiAdminToken, &adminv1.DeleteMappingRequest{Name: name}, codes.NotFound, "not found: deleting mapping "+name+": no such mapping")
	expect(apiOp{"/floe.admin.v1.ClusterService/ListMembers", "GET", "/v1/cluster/members", false}, "", &adminv1.ListMembersRequest{}, codes.Unauthenticated, "")
}

// produceN writes records i = from..from+n-1 alternately to partitions 0 and 1.
func produceN(t *testing.T, cl *kgo.Client, topic string, from, n int) {
	t.Helper()
	var vals []string
	for i := from; i < from+n; i++ {
		vals = append(vals, fmt.Sprintf(`{"i":%d}`, i))
	}
	testnode.Produce(t, cl, topic, vals, 2)
}

func getAPITable(t *testing.T, tr apiTransport, table string) *adminv1.TableStatus {
	t.Helper()
	var st adminv1.TableStatus
	if code, msg := tr.call(apiOp{"/floe.admin.v1.TableService/GetTable", "GET", "/v1/tables/" + table, false}, apiReadToken, &adminv1.GetTableRequest{Table: table}, &st); code != codes.OK {
		if code == codes.NotFound {
			return &st
		}
		t.Fatalf("get table %s: %s %s", table, code, msg)
	}
	return &st
}

func waitAPIRows(t *testing.T, tr apiTransport, table string, want int64) {
	t.Helper()
	wait.Until(t, time.Minute, table+" rows", func() error {
		st := getAPITable(t, tr, table)
		if st.Rows != want || st.PendingEntries != 0 {
			return fmt.Errorf("%d rows, %d pending, want %d (state %s %s)", st.Rows, st.PendingEntries, want, st.State, st.Reason)
		}
		return nil
	})
}
