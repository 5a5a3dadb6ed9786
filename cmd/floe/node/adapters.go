package node

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/floe-io/floe/assignment"
	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/worker"
	"github.com/floe-io/floe/worker/control"
)

// stateAdapter shows the replicated state to the worker and the assignment
// controller through their own small interfaces; only this package, the
// node's wiring, knows both sides.
type stateAdapter struct {
	node *raftnode.Node
	// expect is the configured bootstrap-expect: a new leader holds
	// placement back for a moment until that many nodes are live, so that
	// the first assignment does not hand everything to the first node and
	// move most of it again a second later.
	expect int
}

// placementSettle bounds how long a new leader waits for expect nodes.
const placementSettle = 5 * time.Second

var (
	_ worker.State     = stateAdapter{}
	_ worker.Proposer  = stateAdapter{}
	_ assignment.Store = stateAdapter{}
)

func (a stateAdapter) read(fn func(*fsm.State)) { a.node.FSM().Read(fn) }

func (a stateAdapter) Position(table string, tp ledger.TopicPartition) (o ledger.Offsets, ok bool) {
	a.read(func(s *fsm.State) { o, ok = s.Ledger.Position(table, tp) })
	return
}

func (a stateAdapter) Assigned(node string) map[ledger.TopicPartition]uint64 {
	out := map[ledger.TopicPartition]uint64{}
	a.read(func(s *fsm.State) {
		for _, src := range s.Sources {
			for p := range src.Partitions {
				tp := ledger.TopicPartition{Topic: src.Topic, Partition: p}
				if as, ok := s.Ledger.Assignments[tp.String()]; ok && as.Node == node {
					out[tp] = as.Epoch
				}
			}
		}
	})
	return out
}

func (a stateAdapter) Pending(table string) (out []ledger.Entry) {
	a.read(func(s *fsm.State) { out = slices.Clone(s.Ledger.Pending[table]) })
	return
}

// Holders counts the nodes assigned partitions of topics routed into
// table (the commit loop gathers that many entries of one flush slot).
func (a stateAdapter) Holders(table string) (n int) {
	a.read(func(s *fsm.State) {
		var nodes []string
		for _, src := range s.Sources {
			if src.Table != table {
				continue
			}
			for p := range src.Partitions {
				tp := ledger.TopicPartition{Topic: src.Topic, Partition: p}
				if as, ok := s.Ledger.Assignments[tp.String()]; ok && !slices.Contains(nodes, as.Node) {
					nodes = append(nodes, as.Node)
				}
			}
		}
		n = len(nodes)
	})
	return
}

func (a stateAdapter) Committer(table string) (as ledger.Assignment, ok bool) {
	a.read(func(s *fsm.State) { as, ok = s.Committers[table] })
	return
}

func (a stateAdapter) Watch() <-chan struct{} { return a.node.FSM().Watch() }

// WatchTable returns a channel closed at the next entry that may change
// table key (fsm.FSM.WatchTable): loops that follow one table (commit
// loops, a pipeline's schema requests) wait on it rather than on every
// entry.
func (a stateAdapter) WatchTable(key string) <-chan struct{} { return a.node.FSM().WatchTable(key) }

func (a stateAdapter) Resume(table string) (gen uint64, skips map[ledger.TopicPartition]int64) {
	a.read(func(s *fsm.State) {
		r := s.Resumes[table]
		if r == nil {
			return
		}
		gen = r.Gen
		for key, off := range r.Skips {
			if tp, ok := parseTopicPartition(key); ok {
				if skips == nil {
					skips = map[ledger.TopicPartition]int64{}
				}
				skips[tp] = off
			}
		}
	})
	return
}

// parseTopicPartition reads the "topic/partition" form of TopicPartition.String.
func parseTopicPartition(key string) (ledger.TopicPartition, bool) {
	i := strings.LastIndexByte(key, '/')
	if i <= 0 {
		return ledger.TopicPartition{}, false
	}
	p, err := strconv.ParseInt(key[i+1:], 10, 32)
	if err != nil {
		return ledger.TopicPartition{}, false
	}
	return ledger.TopicPartition{Topic: key[:i], Partition: int32(p)}, true
}

func (a stateAdapter) SchemaRequests(table string) (out []control.SchemaRequest) {
	var reqs []fsm.SchemaRequest
	a.read(func(s *fsm.State) { reqs = slices.Clone(s.SchemaRequests[table]) })
	for _, r := range reqs {
		sh := new(records.Shape)
		if err := json.Unmarshal(r.Shape, sh); err != nil {
			sh = nil // the committer's Prepare refuses it; the requester shows why
		}
		out = append(out, control.SchemaRequest{ID: r.ID, Node: r.Node, Shape: sh, Err: r.Err})
	}
	return out
}

func (a stateAdapter) RequestSchema(ctx context.Context, table string, req control.SchemaRequest) error {
	shape, err := json.Marshal(req.Shape)
	if err != nil {
		return err
	}
	_, err = a.node.Apply(ctx, fsm.RequestSchema{Table: table, ID: req.ID, Node: req.Node, Shape: shape, At: time.Now().UnixMilli()})
	return err
}

func (a stateAdapter) SchemaApplied(ctx context.Context, table string, ids []string, errMsg string, committer ledger.Assignment) error {
	_, err := a.node.Apply(ctx, fsm.SchemaApplied{Table: table, IDs: ids, Err: errMsg, Committer: &committer, At: time.Now().UnixMilli()})
	return err
}

func (a stateAdapter) ResumeTable(ctx context.Context, table string, skips map[ledger.TopicPartition]int64) error {
	cmd := fsm.ResumeTable{Table: table, At: time.Now().UnixMilli()}
	for _, tp := range slices.SortedFunc(maps.Keys(skips), func(x, y ledger.TopicPartition) int {
		return strings.Compare(x.String(), y.String())
	}) {
		cmd.Skips = append(cmd.Skips, fsm.ResumeSkip{TopicPartition: tp, Offset: skips[tp]})
	}
	_, err := a.node.Apply(ctx, cmd)
	return err
}

func (a stateAdapter) RecordFiles(ctx context.Context, table string, e ledger.Entry) error {
	_, err := a.node.Apply(ctx, fsm.RecordFiles{Table: table, Entry: e})
	return err
}

func (a stateAdapter) RegisterSources(ctx context.Context, sources []worker.Source) error {
	cmd := fsm.RegisterSources{}
	for _, s := range sources {
		cmd.Sources = append(cmd.Sources, fsm.TopicSource{Topic: s.Topic, Table: s.Table, Partitions: s.Partitions})
	}
	_, err := a.node.Apply(ctx, cmd)
	return err
}

// View gives the controller the live nodes (registered, not draining, and
// answering the leader's health checks), their zones, and the throughput
// each partition's fetcher measured.
func (a stateAdapter) View() assignment.View {
	v := assignment.View{Current: map[ledger.TopicPartition]ledger.Assignment{}, Committers: map[string]ledger.Assignment{},
		Zones: map[string]string{}, Load: map[ledger.TopicPartition]float64{}}
	v.Nodes = a.node.Live()
	if since := a.node.LeaderSince(); len(v.Nodes) < a.expect && (since.IsZero() || time.Since(since) < placementSettle) {
		v.Nodes = nil
	}
	for key, rate := range a.node.Loads() {
		if tp, ok := parseTopicPartition(key); ok {
			v.Load[tp] = rate
		}
	}
	a.read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if z := m.Zone(); z != "" {
				v.Zones[id] = z
			}
		}
		tables := map[string]bool{}
		for _, src := range s.Sources {
			tables[src.Table] = true
			for p := range src.Partitions {
				tp := ledger.TopicPartition{Topic: src.Topic, Partition: p}
				v.Partitions = append(v.Partitions, tp)
				if as, ok := s.Ledger.Assignments[tp.String()]; ok {
					v.Current[tp] = as
				}
			}
		}
		v.Tables = slices.Sorted(maps.Keys(tables))
		maps.Copy(v.Committers, s.Committers)
	})
	return v
}

func (a stateAdapter) Propose(ctx context.Context, d assignment.Decision) error {
	cmd := fsm.Assign{}
	for tp, as := range d.Partitions {
		cmd.Partitions = append(cmd.Partitions, fsm.PartitionAssignment{TopicPartition: tp, Assignment: as})
	}
	for t, as := range d.Committers {
		cmd.Committers = append(cmd.Committers, fsm.CommitterAssignment{Table: t, Assignment: as})
	}
	_, err := a.node.Apply(ctx, cmd)
	return err
}

func (a stateAdapter) Control(table string) (c control.TableControl) {
	a.read(func(s *fsm.State) {
		_, c.Paused = s.Paused[table]
		rw := s.Rewinds[table]
		if rw == nil {
			return
		}
		c.RewindGen = rw.Gen
		if rw.ReplacePending() {
			c.ReplaceFrom = map[ledger.TopicPartition]int64{}
			for _, p := range rw.To {
				c.ReplaceFrom[p.TopicPartition] = p.Offset
			}
		}
	})
	return c
}

func (a stateAdapter) Mappings() (out []config.Table) {
	a.read(func(s *fsm.State) {
		for _, name := range slices.Sorted(maps.Keys(s.Mappings)) {
			out = append(out, s.Mappings[name].Table.Config())
		}
	})
	return out
}
