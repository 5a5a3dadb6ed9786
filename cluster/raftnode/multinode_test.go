package raftnode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/hashicorp/raft"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/wait"
)

// testGroup is a set of nodes on raft's in-memory transport, whose links
// can be cut (Disconnect) and restored (Connect) to partition the group.
// The internal RPC runs over real loopback TCP.
type testGroup struct {
	t      *testing.T
	nodes  map[string]*Node
	trans  map[string]*raft.InmemTransport
	rpc    map[string]string
	faults map[string]*faults
	dir    string
	expect int
	// fsm holds per node the FSM options it starts with (a node of an
	// older build: fsm.Without).
	fsm map[string][]fsm.Option
	// protocol holds per node the level it states when halted (resume.go);
	// resumeEvery how often a halted node asks (default: 200 ms).
	protocol    map[string]int
	resumeEvery time.Duration
	// clock holds per node the wall clock it reports (NodeConfig.Now).
	clock map[string]func() time.Time
}

func fastRaft(c *raft.Config) {
	c.HeartbeatTimeout = 200 * time.Millisecond
	c.ElectionTimeout = 200 * time.Millisecond
	c.LeaderLeaseTimeout = 100 * time.Millisecond
	c.CommitTimeout = 5 * time.Millisecond
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func newTestGroup(t *testing.T, ids []string, expect int) *testGroup {
	return newTestGroupWith(t, ids, expect, nil)
}

func newTestGroupWith(t *testing.T, ids []string, expect int, opts map[string][]fsm.Option) *testGroup {
	return newTestGroupLevels(t, ids, expect, opts, nil)
}

// newTestGroupLevels is newTestGroupWith whose nodes also state the
// protocol levels given when halted.
func newTestGroupLevels(t *testing.T, ids []string, expect int, opts map[string][]fsm.Option, protocol map[string]int) *testGroup {
	return newTestGroupSetup(t, ids, expect, func(g *testGroup) { g.fsm, g.protocol = opts, protocol })
}

// newTestGroupSetup is newTestGroup with setup applied to the group before
// its nodes start.
func newTestGroupSetup(t *testing.T, ids []string, expect int, setup func(*testGroup)) *testGroup {
	g := &testGroup{t: t, nodes: map[string]*Node{}, trans: map[string]*raft.InmemTransport{}, rpc: map[string]string{}, faults: map[string]*faults{}, dir: t.TempDir(), expect: expect}
	setup(g)
	for _, id := range ids {
		g.rpc[id] = freeAddr(t)
	}
	for _, id := range ids {
		g.start(id, expect)
	}
	t.Cleanup(func() {
		for _, n := range g.nodes {
			n.Close()
		}
	})
	return g
}

func (g *testGroup) joinList() []string {
	var out []string
	for _, a := range g.rpc {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// start opens a node and links its transport with every other node's.
func (g *testGroup) start(id string, expect int) *Node {
	g.t.Helper()
	if _, ok := g.rpc[id]; !ok {
		g.rpc[id] = freeAddr(g.t)
	}
	_, tr := raft.NewInmemTransport(raft.ServerAddress("inmem-" + id))
	for oid, ot := range g.trans {
		tr.Connect(ot.LocalAddr(), ot)
		ot.Connect(tr.LocalAddr(), tr)
		_ = oid
	}
	g.trans[id] = tr
	if g.faults[id] == nil {
		g.faults[id] = &faults{}
	}
	n, err := Open(NodeConfig{
		ID: id, DataDir: filepath.Join(g.dir, id), RPCAddr: g.rpc[id], BootstrapExpect: expect, Join: g.joinList(),
		Transport: tr, Raft: fastRaft, NoSync: true, FailureTimeout: 2 * time.Second, DeadServerTimeout: time.Hour,
		Version: "test", Zone: "z-" + id, ApplyTimeout: 5 * time.Second, Logger: testLogger(g.t),
		RPCServerInterceptor: g.faults[id].server, RPCClientInterceptor: g.faults[id].client, FSM: g.fsm[id],
		Protocol: g.protocol[id], ResumeEvery: cmp.Or(g.resumeEvery, 200*time.Millisecond), Now: g.clock[id],
	})
	if err != nil {
		g.t.Fatalf("opening %s: %v", id, err)
	}
	g.nodes[id] = n
	return n
}

// partition cuts id off from every other node (both directions).
func (g *testGroup) partition(id string) {
	g.faults[id].cutOff.Store(true)
	for oid, ot := range g.trans {
		if oid == id {
			continue
		}
		g.trans[id].Disconnect(ot.LocalAddr())
		ot.Disconnect(g.trans[id].LocalAddr())
	}
}

func (g *testGroup) heal(id string) {
	g.faults[id].cutOff.Store(false)
	for oid, ot := range g.trans {
		if oid == id {
			continue
		}
		g.trans[id].Connect(ot.LocalAddr(), ot)
		ot.Connect(g.trans[id].LocalAddr(), g.trans[id])
	}
}

func (g *testGroup) leader(exclude ...string) *Node {
	g.t.Helper()
	var l *Node
	wait.For(g.t, 15*time.Second, "a leader", func() bool {
		for id, n := range g.nodes {
			if n.IsLeader() && !slices.Contains(exclude, id) {
				l = n
				return true
			}
		}
		return false
	})
	return l
}

func voters(n *Node) (v, nv int) {
	for _, m := range n.Members() {
		if m.Voter {
			v++
		} else {
			nv++
		}
	}
	return
}

// TestBootstrapExpectFormsOneGroup starts three fresh nodes at once with
// bootstrap-expect 3: they form one group of three voters, every node
// registers, and a command sent to a follower is forwarded to the leader
// and readable on the follower as soon as Apply returns.
func TestBootstrapExpectFormsOneGroup(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	for _, n := range g.nodes {
		wait.For(t, 10*time.Second, "node "+n.ID()+" registered everywhere", func() bool {
			var c int
			n.FSM().Read(func(s *State) { c = len(s.Nodes) })
			return c == 3
		})
	}
	if v, nv := voters(l); v != 3 || nv != 0 {
		t.Fatalf("voters %d non-voters %d, want 3 and 0", v, nv)
	}
	for id, n := range g.nodes {
		if n == l {
			continue
		}
		ns := []string{"ns_" + id}
		if _, err := n.Apply(context.Background(), CreateNamespace{Parts: ns}); err != nil {
			t.Fatalf("forwarded apply from %s: %v", id, err)
		}
		var ok bool
		n.FSM().Read(func(s *State) { _, ok = s.Namespaces[ledger.TableKey(ns)] })
		if !ok {
			t.Fatalf("follower %s does not read its own forwarded write", id)
		}
	}
	// A refusal keeps its sentinel across the wire.
	f := g.followers(l)[0]
	_, err := f.Apply(context.Background(), CreateNamespace{Parts: []string{"ns_" + f.ID()}})
	if err == nil || !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		t.Fatalf("duplicate namespace through a follower: %v, want namespace-exists sentinel", err)
	}
}

func (g *testGroup) followers(l *Node) []*Node {
	var out []*Node
	for _, id := range sortedIDs(g.nodes) {
		if g.nodes[id] != l {
			out = append(out, g.nodes[id])
		}
	}
	return out
}

func sortedIDs(m map[string]*Node) []string {
	var out []string
	for id := range m {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// TestFencingAcrossForwarding: a ledger record forwarded by a node whose
// assignment epoch is stale is refused, and the refusal is a ledger refusal
// on the forwarding node too, so its worker stops that work.
func TestFencingAcrossForwarding(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	f := g.followers(l)[0]
	ctx := context.Background()
	mustApply(t, f, CreateNamespace{Parts: []string{"ns"}})
	mustApply(t, f, CreateTable{Ident: []string{"ns", "t"}, MetadataLocation: "file:///x/00000-a.metadata.json"})
	tp := ledger.TopicPartition{Topic: "orders", Partition: 0}
	mustApply(t, l, Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: f.ID(), Epoch: 1}}}})
	entry := func(id string, from, to int64, epoch uint64) ledger.Entry {
		return ledger.Entry{ID: id, Node: f.ID(), Ranges: []ledger.Range{{TopicPartition: tp, From: from, To: to, Epoch: epoch}}}
	}
	table := ledger.TableKey([]string{"ns", "t"})
	mustApply(t, f, RecordFiles{Table: table, Entry: entry("e1", 0, 10, 1)})
	// The partition moves to another node at epoch 2: f is now a zombie.
	mustApply(t, l, Assign{Partitions: []PartitionAssignment{{TopicPartition: tp, Assignment: ledger.Assignment{Node: l.ID(), Epoch: 2}}}})
	_, err := f.Apply(ctx, RecordFiles{Table: table, Entry: entry("e2", 10, 20, 1)})
	if !ledger.Refused(err) || !errors.Is(err, ledger.ErrStaleEpoch) || IsRetryable(err) {
		t.Fatalf("stale record through a follower: %v; want a terminal stale-epoch refusal", err)
	}
	// A gap is refused too.
	_, err = l.Apply(ctx, RecordFiles{Table: table, Entry: ledger.Entry{ID: "e3", Node: l.ID(), Ranges: []ledger.Range{{TopicPartition: tp, From: 11, To: 20, Epoch: 2}}}})
	if !errors.Is(err, ledger.ErrGap) {
		t.Fatalf("gap: %v", err)
	}
	// A commit from a committer epoch that is not current is refused.
	mustApply(t, l, Assign{Committers: []CommitterAssignment{{Table: table, Assignment: ledger.Assignment{Node: f.ID(), Epoch: 1}}}})
	mustApply(t, l, Assign{Committers: []CommitterAssignment{{Table: table, Assignment: ledger.Assignment{Node: l.ID(), Epoch: 2}}}})
	stale := ledger.Assignment{Node: f.ID(), Epoch: 1}
	_, err = f.Apply(ctx, CommitTables{Swaps: []TableSwap{{Table: table, Expected: "file:///x/00000-a.metadata.json", New: "file:///x/00001-b.metadata.json"}}, Table: table, Entries: []string{"e1"}, Committer: &stale})
	if !errors.Is(err, ErrStaleCommitter) || IsRetryable(err) {
		t.Fatalf("stale committer through a follower: %v", err)
	}
}

func mustApply(t *testing.T, n *Node, c Command) {
	t.Helper()
	if _, err := n.Apply(context.Background(), c); err != nil {
		t.Fatalf("applying %s on %s: %v", c.Type(), n.ID(), err)
	}
}

// TestPartitionedLeader: the leader cut off from the others loses its role;
// the majority elects a new leader and keeps accepting commands; the old
// leader cannot apply anything while cut off, and after the partition heals
// it catches up with everything it missed.
func TestPartitionedLeader(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	old := g.leader()
	wait.For(t, 10*time.Second, "all registered", func() bool {
		var c int
		old.FSM().Read(func(s *State) { c = len(s.Nodes) })
		return c == 3
	})
	g.partition(old.ID())
	nl := g.leader(old.ID())
	mustApply(t, nl, CreateNamespace{Parts: []string{"during_partition"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := old.Apply(ctx, CreateNamespace{Parts: []string{"zombie"}}); err == nil {
		t.Fatal("the partitioned old leader applied a command")
	}
	g.heal(old.ID())
	wait.For(t, 10*time.Second, "old leader to catch up", func() bool {
		var ok bool
		old.FSM().Read(func(s *State) { _, ok = s.Namespaces[ledger.TableKey([]string{"during_partition"})] })
		return ok
	})
	var zombie bool
	nl.FSM().Read(func(s *State) { _, zombie = s.Namespaces[ledger.TableKey([]string{"zombie"})] })
	if zombie {
		t.Fatal("a command of the partitioned leader survived")
	}
}

// TestJoinPromoteLeaveAndReplace: nodes that join an existing group come
// in as non-voters and are promoted up to five voters; a failed voter is
// replaced by a healthy non-voter; a node that leaves is gone from the
// configuration and the membership.
func TestJoinPromoteLeaveAndReplace(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	for _, id := range []string{"d", "e", "f"} {
		g.start(id, 0)
	}
	wait.For(t, 20*time.Second, "six members, five voters", func() bool {
		v, nv := voters(g.leader())
		return v == 5 && nv == 1
	})
	// A voter that fails is replaced by the healthy non-voter.
	var victim *Node
	for _, m := range g.leader().Members() {
		if m.Voter && !m.Leader {
			victim = g.nodes[m.ID]
			break
		}
	}
	g.partition(victim.ID())
	wait.For(t, 20*time.Second, "failed voter replaced", func() bool {
		for _, m := range g.leader(victim.ID()).Members() {
			if m.ID == victim.ID() {
				return !m.Voter
			}
		}
		return false
	})
	if slices.Contains(g.leader(victim.ID()).Live(), victim.ID()) {
		t.Fatal("a failed node is still live for assignment")
	}
	g.heal(victim.ID())
	// A leaving node (here the leader, which hands leadership over first).
	l = g.leader()
	if err := l.Leave(context.Background()); err != nil {
		t.Fatalf("leave: %v", err)
	}
	nl := g.leader(l.ID())
	wait.For(t, 20*time.Second, "leaver gone", func() bool {
		for _, m := range nl.Members() {
			if m.ID == l.ID() {
				return false
			}
		}
		var ok bool
		nl.FSM().Read(func(s *State) { _, ok = s.Nodes[l.ID()] })
		return !ok
	})
	l.Close()
	delete(g.nodes, l.ID())
	fmt.Fprintln(testWriter{t}, "members after leave:", len(nl.Members()))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// TestLostAnswerThenResend: the leader applies a forwarded commit but its
// answer is lost (it died mid-call); the follower resends, the FSM answers
// the copy as the first (its proposal id is in the window; a copy from a
// proposer without ids is refused by the compare-and-swap), and the catalog
// must see that its commit took effect - not report a failure and, above
// all, not delete the metadata file that is now the table's pointer.
func TestLostAnswerThenResend(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	f := g.followers(l)[0]
	wait.For(t, 10*time.Second, "all registered", func() bool { return f.Registered() && l.Registered() && len(l.Live()) == 3 })
	ctx := context.Background()
	cat := NewCatalog(f, "file://"+filepath.Join(g.dir, "wh"), nil)
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	g.faults[l.ID()].dropAnswers.Store(1)
	tbl, err := cat.CreateTable(ctx, table.Identifier{"db", "t"}, sc)
	if err != nil {
		t.Fatalf("create with a lost answer: %v", err)
	}
	g.faults[l.ID()].dropAnswers.Store(1)
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		t.Fatalf("commit with a lost answer: %v", err)
	}
	loc, err := cat.MetadataLocation(table.Identifier{"db", "t"})
	if err != nil || loc != committed.MetadataLocation() {
		t.Fatalf("pointer %s (%v), commit returned %s", loc, err, committed.MetadataLocation())
	}
	if _, err := os.Stat(strings.TrimPrefix(loc, "file://")); err != nil {
		t.Fatalf("the table's current metadata file is gone: %v", err)
	}
	reloaded, err := cat.LoadTable(ctx, table.Identifier{"db", "t"})
	if err != nil || reloaded.Properties()["k"] != "v" {
		t.Fatalf("reload: %v, properties %v", err, reloaded.Properties())
	}
}

// TestSyncAfterNonCommandEntries: a strong read on a follower catches up
// with the leader's applied index even when the newest entries carry no
// command (a barrier, a configuration change), which the FSM's own counter
// never reaches. It used to wait until the deadline on an idle cluster.
func TestSyncAfterNonCommandEntries(t *testing.T) {
	g := newTestGroup(t, []string{"a", "b", "c"}, 3)
	l := g.leader()
	wait.For(t, 10*time.Second, "all registered", func() bool { return len(l.Live()) == 3 })
	for _, f := range g.followers(l) {
		wait.For(t, 10*time.Second, "follower registered", f.Registered)
	}
	for range 3 {
		if err := l.raft.Barrier(time.Second).Error(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range g.followers(l) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err := f.Sync(ctx)
		cancel()
		if err != nil {
			t.Fatalf("sync on %s after non-command entries: %v", f.ID(), err)
		}
	}
}
