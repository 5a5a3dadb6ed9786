//go:build long

package e2e

// A fleet of real `floe serve` processes for the cluster tests (chaos,
// rolling upgrade, total loss): N binaries on 127.0.0.1 sharing one
// warehouse, a producer writing to 3 topics x 8 partitions throughout, a
// status watcher, and the independent final check. Everything is observed
// from outside, through signals, the admin API and the tables themselves,
// as an operator would.
//
// Environment (all optional):
//   FLOE_CHAOS_KAFKA=host:port     a real broker instead of the in-test kfake
//   FLOE_CHAOS_S3_ENDPOINT, _BUCKET, _ACCESS_KEY, _SECRET_KEY, _REGION
//                                  an s3:// warehouse (MinIO) instead of file://
//   FLOE_CHAOS_DIR=path            keep configs, node logs and data there
//   FLOE_CHAOS_REPORT=path         write each table's metadata location and
//                                  expected offsets (test/interop scenario 7)

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"gopkg.in/yaml.v3"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/recovery"
	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/embedded"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
)

// Short timeouts so that failures are detected and work moves within a
// test's patience; the semantics are the production ones.
const (
	fleetCommitInterval = time.Second
	fleetFailureTimeout = 3 * time.Second
	fleetBackupInterval = 5 * time.Second
	fleetDrainTimeout   = 30 * time.Second
	fleetPartitions     = 8
	fleetNamespace      = "chaos"
	fleetMaxVoters      = 5
)

type fleetNode struct {
	id, dir, dataDir, cfgPath, logPath string
	raftAddr, adminAddr, rpcAddr       string
	recover                            bool
	bin                                string // the floe binary; "" is the fleet's

	// Guarded by fleet.mu.
	incarnation int
	state       string // running, paused, stopped
	exited      chan struct{}
	exitCode    int
	expectExit  bool
	logStart    int64 // size of the log when this incarnation started
	cmd         *exec.Cmd
}

type fleet struct {
	t        *testing.T
	bin, dir string
	brokers  []string
	wh       config.Warehouse
	topics   []string
	// txnTopics are mapped like topics but written by the chaos test's
	// transactional load (chaos_txn_test.go), not the plain producer.
	txnTopics []string
	// tableOpts holds more settings of a mapped topic's table (the
	// upsert fleet test's mode).
	tableOpts map[string]map[string]any
	client    *kgo.Client
	t0        time.Time
	extra     map[string]any // added to the FLOE_CHAOS_REPORT file
	mu        sync.Mutex
	nodes     map[string]*fleetNode
	seq       int
	events    []string
	crashed   []string
	watchers  []*watcher
	// binFor names another floe binary for the nodes started with a
	// prefix (the mixed-version test runs an older build).
	binFor map[string]string
	// cfgExtra holds more top-level config sections for every node
	// written after it is set (auth for the REST catalog test).
	cfgExtra map[string]any
	// adminToken is sent with every status request when the fleet
	// configures tokens.
	adminToken string
	// tls, when set, puts the internal ports under mutual TLS with one
	// certificate per node (chaos_tls_test.go).
	tls *fleetTLS
	// s3Endpoint, when set, is the S3 endpoint the nodes use instead of
	// the warehouse's (the throttling proxy, chaos_s3_test.go).
	s3Endpoint string
	// smallDisks gives every node made from now on its own small tmpfs
	// as data directory (chaos_disk_test.go).
	smallDisks bool
}

func newFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{t: t, bin: floeBinary(t), nodes: map[string]*fleetNode{}, t0: time.Now(), extra: map[string]any{}}
	f.dir = t.TempDir()
	if d := os.Getenv("FLOE_CHAOS_DIR"); d != "" {
		f.dir = filepath.Join(d, t.Name())
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := fmt.Sprintf("r%d", time.Now().UnixNano()%1_000_000_000)
	base := []string{"orders", "clicks", "payments"}
	if addr := os.Getenv("FLOE_CHAOS_KAFKA"); addr != "" {
		// A real broker outlives the test: unique topic names per run.
		for _, b := range base {
			f.topics = append(f.topics, b+"_"+run)
		}
		f.brokers = []string{addr}
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		f.client = cl
		f.createTopics(f.topics...)
	} else {
		f.topics = base
		kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(fleetPartitions, base...)})
		f.brokers, f.client = kc.ListenAddrs(), cl
	}
	f.wh.Location = "file://" + filepath.Join(f.dir, "warehouse")
	if ep := os.Getenv("FLOE_CHAOS_S3_ENDPOINT"); ep != "" {
		f.wh = config.Warehouse{
			Location: "s3://" + os.Getenv("FLOE_CHAOS_S3_BUCKET") + "/chaos-" + run,
			S3: config.S3{Endpoint: ep, Region: cmp.Or(os.Getenv("FLOE_CHAOS_S3_REGION"), "us-east-1"),
				AccessKeyID: os.Getenv("FLOE_CHAOS_S3_ACCESS_KEY"), SecretAccessKey: os.Getenv("FLOE_CHAOS_S3_SECRET_KEY")},
		}
	}
	t.Logf("fleet: dir %s, kafka %v, topics %v, warehouse %s", f.dir, f.brokers, f.topics, f.wh.Location)
	// go test -timeout panics without running cleanups: kill the fleet
	// shortly before, so no floe process outlives the test binary.
	if dl, ok := t.Deadline(); ok && time.Until(dl) > time.Minute {
		timer := time.AfterFunc(time.Until(dl)-10*time.Second, f.killAll)
		t.Cleanup(func() { timer.Stop() })
	}
	t.Cleanup(func() {
		for _, w := range f.watchers {
			w.stop()
		}
		f.killAll()
		if t.Failed() {
			f.dumpDiagnostics()
		}
	})
	return f
}

func (f *fleet) createTopics(topics ...string) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	for _, tp := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tp, fleetPartitions, -1
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, f.client)
	if err != nil {
		f.t.Fatalf("creating topics: %v", err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			f.t.Fatalf("creating topic %s: error code %d %v", rt.Topic, rt.ErrorCode, rt.ErrorMessage)
		}
	}
}

// event appends a timestamped line to the action log (printed on failure).
func (f *fleet) event(format string, args ...any) {
	f.t.Helper()
	line := fmt.Sprintf("%+7.1fs ", time.Since(f.t0).Seconds()) + fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.events = append(f.events, line)
	f.mu.Unlock()
	f.t.Log(line)
}

func mustFreeAddr(t *testing.T) string {
	a, err := embedded.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// newNode allocates ports and directories for a node; start runs it.
func (f *fleet) newNode(prefix string, recover bool) *fleetNode {
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("%s%d", prefix, f.seq)
	f.mu.Unlock()
	dir := filepath.Join(f.dir, "nodes", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		f.t.Fatal(err)
	}
	n := &fleetNode{id: id, dir: dir, dataDir: filepath.Join(dir, "data"), cfgPath: filepath.Join(dir, "floe.yaml"),
		logPath: filepath.Join(dir, "floe.log"), raftAddr: mustFreeAddr(f.t), adminAddr: mustFreeAddr(f.t),
		rpcAddr: mustFreeAddr(f.t), recover: recover, state: "stopped", bin: f.binFor[prefix]}
	if f.smallDisks {
		f.mountDisk(n)
	}
	return n
}

func (f *fleet) writeConfig(n *fleetNode, bootstrapExpect int, join []string) {
	var tables []map[string]any
	for _, tp := range append(slices.Clone(f.topics), f.txnTopics...) {
		tbl := map[string]any{"topic": tp, "namespace": fleetNamespace, "name": tp, "format": "json", "start_offset": "earliest"}
		maps.Copy(tbl, f.tableOpts[tp])
		tables = append(tables, tbl)
	}
	wh := map[string]any{"location": f.wh.Location}
	if f.wh.S3.Endpoint != "" {
		wh["s3"] = map[string]any{"endpoint": cmp.Or(f.s3Endpoint, f.wh.S3.Endpoint), "region": f.wh.S3.Region,
			"access_key_id": f.wh.S3.AccessKeyID, "secret_access_key": f.wh.S3.SecretAccessKey}
	}
	doc := map[string]any{
		"node": map[string]any{"id": n.id, "data_dir": n.dataDir, "raft_addr": n.raftAddr, "admin_addr": n.adminAddr, "rpc_addr": n.rpcAddr},
		"cluster": map[string]any{"bootstrap_expect": bootstrapExpect, "join": join, "max_voters": fleetMaxVoters,
			"failure_timeout": fleetFailureTimeout.String(), "drain_timeout": fleetDrainTimeout.String(),
			"backup_interval": fleetBackupInterval.String()},
		"kafka":           map[string]any{"bootstrap_servers": f.brokers},
		"warehouse":       wh,
		"commit_interval": fleetCommitInterval.String(),
		"tables":          tables,
	}
	maps.Copy(doc, f.cfgExtra)
	if f.tls != nil {
		doc["cluster"].(map[string]any)["tls"] = f.tls.configFor(n)
	}
	raw, err := yaml.Marshal(doc)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(n.cfgPath, raw, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// startNew starts k fresh nodes. bootstrapExpect > 0 forms a new group of
// them (the join list is the k nodes); 0 joins the running fleet.
func (f *fleet) startNew(k, bootstrapExpect int, prefix string, recover bool) []*fleetNode {
	var ns []*fleetNode
	for range k {
		ns = append(ns, f.newNode(prefix, recover))
	}
	var join []string
	if bootstrapExpect > 0 {
		for _, n := range ns {
			join = append(join, n.rpcAddr)
		}
	} else {
		for _, n := range f.running() {
			join = append(join, n.rpcAddr)
		}
	}
	for _, n := range ns {
		f.writeConfig(n, bootstrapExpect, join)
		f.mu.Lock()
		f.nodes[n.id] = n
		f.mu.Unlock()
		f.start(n)
	}
	return ns
}

// start runs (or restarts, on the same data dir and ports) a node's process.
func (f *fleet) start(n *fleetNode) {
	f.mu.Lock()
	defer f.mu.Unlock()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		f.t.Fatal(err)
	}
	st, _ := logf.Stat()
	n.incarnation++
	n.logStart = st.Size()
	fmt.Fprintf(logf, "=== harness: start %s incarnation %d at %+.1fs\n", n.id, n.incarnation, time.Since(f.t0).Seconds())
	args := []string{"serve", "--config", n.cfgPath}
	if n.recover {
		args = append(args, "--recover")
	}
	bin := f.bin
	if n.bin != "" {
		bin = n.bin
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Read only by the clock-stepping build (chaos_clock_test.go).
	cmd.Env = append(os.Environ(), "FLOE_CHAOS_CLOCK_FILE="+n.clockFile())
	cmd.SysProcAttr = deathSignal()
	if err := cmd.Start(); err != nil {
		logf.Close()
		f.t.Fatalf("starting %s: %v", n.id, err)
	}
	n.cmd, n.state, n.expectExit, n.exited = cmd, "running", false, make(chan struct{})
	inc, exited := n.incarnation, n.exited
	go func() {
		_ = cmd.Wait()
		logf.Close()
		f.mu.Lock()
		n.exitCode = cmd.ProcessState.ExitCode()
		if !n.expectExit {
			msg := fmt.Sprintf("%s (incarnation %d) exited on its own with code %d", n.id, inc, n.exitCode)
			f.crashed = append(f.crashed, msg)
			f.events = append(f.events, fmt.Sprintf("%+7.1fs UNEXPECTED: %s", time.Since(f.t0).Seconds(), msg))
		}
		n.state = "stopped"
		f.mu.Unlock()
		close(exited)
	}()
}

// deathSignal makes the kernel SIGKILL a child when the test binary dies
// (Linux Pdeathsig; set by reflection so the file builds elsewhere).
func deathSignal() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{}
	if fv := reflect.ValueOf(attr).Elem().FieldByName("Pdeathsig"); fv.IsValid() && fv.CanSet() {
		fv.Set(reflect.ValueOf(syscall.SIGKILL))
	}
	return attr
}

func (f *fleet) signal(n *fleetNode, sig syscall.Signal, expectExit bool) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if expectExit {
		n.expectExit = true
	}
	if n.cmd != nil && n.state != "stopped" {
		_ = n.cmd.Process.Signal(sig)
	}
	return n.exited
}

// kill SIGKILLs a node and waits for the process to be gone.
func (f *fleet) kill(n *fleetNode) {
	select {
	case <-f.signal(n, syscall.SIGKILL, true):
	case <-time.After(20 * time.Second):
		f.t.Fatalf("%s did not die after SIGKILL", n.id)
	}
}

func (f *fleet) pause(n *fleetNode) {
	f.signal(n, syscall.SIGSTOP, false)
	f.mu.Lock()
	n.state = "paused"
	f.mu.Unlock()
}

func (f *fleet) resume(n *fleetNode) {
	f.signal(n, syscall.SIGCONT, false)
	f.mu.Lock()
	if n.state == "paused" {
		n.state = "running"
	}
	f.mu.Unlock()
}

// terminate sends SIGTERM (a graceful drain) and waits up to limit for the
// exit; it returns the exit code and how long the node took.
func (f *fleet) terminate(n *fleetNode, limit time.Duration) (int, time.Duration, error) {
	start := time.Now()
	select {
	case <-f.signal(n, syscall.SIGTERM, true):
	case <-time.After(limit):
		f.kill(n)
		return -1, time.Since(start), fmt.Errorf("%s did not exit within %s of SIGTERM (killed)", n.id, limit)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return n.exitCode, time.Since(start), nil
}

// remove forgets a node that left the group for good.
func (f *fleet) remove(n *fleetNode) {
	f.mu.Lock()
	delete(f.nodes, n.id)
	f.mu.Unlock()
}

// incarnationLog returns what the node logged since its last start.
func (f *fleet) incarnationLog(n *fleetNode) string {
	data, _ := os.ReadFile(n.logPath)
	f.mu.Lock()
	from := n.logStart
	f.mu.Unlock()
	if from > int64(len(data)) {
		return ""
	}
	return string(data[from:])
}

func (f *fleet) killAll() {
	f.mu.Lock()
	var chans []chan struct{}
	for _, n := range f.nodes {
		if n.cmd != nil && n.state != "stopped" {
			n.expectExit = true
			_ = n.cmd.Process.Signal(syscall.SIGKILL)
			chans = append(chans, n.exited)
		}
	}
	f.mu.Unlock()
	for _, c := range chans {
		select {
		case <-c:
		case <-time.After(10 * time.Second):
		}
	}
}

// running returns the nodes whose process runs (not paused), by id.
func (f *fleet) running() []*fleetNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*fleetNode
	for _, n := range f.nodes {
		if n.state == "running" {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (f *fleet) node(id string) *fleetNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes[id]
}

func (f *fleet) incarnation(n *fleetNode) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return n.incarnation, n.state == "running"
}

func (f *fleet) checkCrashes() {
	f.mu.Lock()
	crashed := slices.Clone(f.crashed)
	f.mu.Unlock()
	if len(crashed) > 0 {
		f.t.Fatalf("floe processes exited on their own: %s", strings.Join(crashed, "; "))
	}
}

func (f *fleet) fetch(n *fleetNode, timeout time.Duration) (status.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return admin.FetchWith(ctx, http.DefaultClient, "http://"+n.adminAddr, f.adminToken)
}

// status returns the report of the first running node that answers.
func (f *fleet) status() (status.Report, *fleetNode, error) {
	var errs []error
	ns := f.running()
	rand.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
	for _, n := range ns {
		rep, err := f.fetch(n, 3*time.Second)
		if err == nil {
			return rep, n, nil
		}
		errs = append(errs, err)
	}
	return status.Report{}, nil, fmt.Errorf("no node answers: %w", errors.Join(errs...))
}

// leaderStatus returns the leader's report: only the leader judges health.
func (f *fleet) leaderStatus() (status.Report, *fleetNode, error) {
	rep, _, err := f.status()
	if err != nil {
		return rep, nil, err
	}
	ln := f.node(rep.Leader)
	if ln == nil {
		return rep, nil, fmt.Errorf("leader %q is not a running fleet node", rep.Leader)
	}
	if _, ok := f.incarnation(ln); !ok {
		return rep, nil, fmt.Errorf("leader %s is not running", ln.id)
	}
	lrep, err := f.fetch(ln, 3*time.Second)
	if err != nil {
		return rep, nil, err
	}
	if lrep.RaftState != "Leader" {
		return lrep, nil, fmt.Errorf("%s is %s, not the leader", ln.id, lrep.RaftState)
	}
	return lrep, ln, nil
}

func ready(n *fleetNode) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + n.adminAddr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// healthProblem says what keeps the fleet from being settled, "" if it is:
// every running node ready and a member the leader finds healthy, no other
// member, at least 3 voters (so one more failure keeps a majority), every
// known partition and committer role on a running node.
func (f *fleet) healthProblem() string {
	rep, _, err := f.leaderStatus()
	if err != nil {
		return err.Error()
	}
	run := f.running()
	want := map[string]bool{}
	for _, n := range run {
		want[n.id] = true
		if !ready(n) {
			return n.id + " not ready"
		}
	}
	voters := 0
	for _, m := range rep.Members {
		if !want[m.ID] {
			return fmt.Sprintf("member %s is not a running node", m.ID)
		}
		delete(want, m.ID)
		if !m.Healthy || m.Draining {
			return fmt.Sprintf("member %s healthy=%v draining=%v", m.ID, m.Healthy, m.Draining)
		}
		if m.Role == "leader" || m.Role == "voter" {
			voters++
		}
	}
	if len(want) > 0 {
		return fmt.Sprintf("running nodes not members: %v", slices.Sorted(maps.Keys(want)))
	}
	if v := min(len(run), 3); voters < v {
		return fmt.Sprintf("%d voters, want at least %d", voters, v)
	}
	live := map[string]bool{}
	for _, n := range run {
		live[n.id] = true
	}
	for _, tr := range rep.Tables {
		if tr.Committer != "" && !live[tr.Committer] {
			return fmt.Sprintf("%s committer %s is not running", tr.Table, tr.Committer)
		}
		for _, p := range tr.Partitions {
			if p.Epoch > 0 && !live[p.Node] { // epoch 0: not in the ledger yet, no holder shown
				return fmt.Sprintf("%s %s/%d held by %q", tr.Table, p.Topic, p.Partition, p.Node)
			}
		}
	}
	return ""
}

// settle waits until healthProblem is empty; a fleet that does not heal
// is a finding.
func (f *fleet) settle(timeout time.Duration) {
	f.t.Helper()
	err := wait.Poll(timeout, func() error {
		f.checkCrashes()
		if p := f.healthProblem(); p != "" {
			return errors.New(p)
		}
		return nil
	})
	if err != nil {
		rep, _, _ := f.status()
		f.t.Fatalf("fleet not settled after %s: %v\nstatus: %s", timeout, err, reportSummary(rep))
	}
}

// waitCommitted waits until every table committed at least once.
func (f *fleet) waitCommitted(timeout time.Duration) {
	f.t.Helper()
	var rep status.Report
	err := wait.Poll(timeout, func() error {
		var err error
		if rep, _, err = f.status(); err != nil {
			return err
		}
		if len(rep.Tables) < len(f.topics) {
			return fmt.Errorf("%d tables of %d", len(rep.Tables), len(f.topics))
		}
		for _, tr := range rep.Tables {
			if tr.Rows == 0 {
				return fmt.Errorf("%s has no rows", tr.Table)
			}
		}
		return nil
	})
	if err != nil {
		f.t.Fatalf("tables never committed within %s (%v): %s", timeout, err, reportSummary(rep))
	}
}

func tableOf(topic string) string { return fleetNamespace + "." + topic }

func (f *fleet) dumpDiagnostics() {
	f.mu.Lock()
	events := slices.Clone(f.events)
	f.mu.Unlock()
	f.t.Logf("action log:\n%s", strings.Join(events, "\n"))
	// Drained nodes are gone from f.nodes; their logs are still on disk.
	logs, _ := filepath.Glob(filepath.Join(f.dir, "nodes", "*", "floe.log"))
	for _, path := range logs {
		data, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		var errs []string
		for _, l := range lines {
			if strings.Contains(l, "level=ERROR") || strings.Contains(l, "panic") {
				errs = append(errs, l)
			}
		}
		if len(errs) > 15 {
			errs = errs[len(errs)-15:]
		}
		f.t.Logf("=== %s: %d lines; last errors:\n%s\n--- last 40 lines:\n%s", path, len(lines),
			strings.Join(errs, "\n"), strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// readBackup reads the state backup the leader writes to the warehouse.
func (f *fleet) readBackup() (*fsm.State, error) {
	loc := recovery.BackupLocation(f.wh.Location)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fsys, err := icebergio.LoadFS(ctx, node.IOProps(f.wh), loc)
	if err != nil {
		return nil, err
	}
	rfs, ok := fsys.(icebergio.ReadFileIO)
	if !ok {
		return nil, fmt.Errorf("storage of %s cannot read", loc)
	}
	data, err := rfs.ReadFile(loc)
	if err != nil {
		return nil, err
	}
	return fsm.DecodeSnapshot(bytes.NewReader(data))
}
