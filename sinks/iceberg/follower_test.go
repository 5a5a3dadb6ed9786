package iceberg

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/delta"
	"github.com/floe-io/floe/sinks/sink"
)

// testDeltaTables is the node's delta.Tables over the test's Raft node:
// writes says whether the table's formats name delta.
type testDeltaTables struct {
	n        *raftnode.Node
	writes   *atomic.Bool
	settings *atomic.Pointer[delta.Settings] // nil: the defaults
}

func (d testDeltaTables) WritesDelta(string) bool { return d.writes.Load() }

func (d testDeltaTables) DeltaSettings(string) delta.Settings {
	if d.settings == nil {
		return delta.Settings{}
	}
	return *d.settings.Load()
}

func (d testDeltaTables) DeltaRecorded(key string) (c ledger.DeltaCommit, ok bool) {
	d.n.FSM().Read(func(s *fsm.State) {
		if t := s.Tables[key]; t != nil && t.Delta != nil {
			c, ok = *t.Delta, true
		}
	})
	return c, ok
}

// hookedFollower is the Delta follower the node wires, with the crash
// points the tests inject around it: through the sink's Follower
// interface alone, as a process dying there would see it.
type hookedFollower struct {
	*delta.Follower
	// published runs after a version is published and before the
	// replicated entry that records it is proposed: a failure there proves
	// a crash between the two neither skips a version nor publishes one
	// twice.
	published func(key string, version int64) error
	// rearranging runs before a committed compaction is published: a
	// failure proves a crash between the Iceberg commit and the Delta
	// version only defers the version to the next sync, still an OPTIMIZE.
	rearranging func(key string) error
	// mirroring runs before a dead-letter table's log is synced (at its
	// fence): a failure proves a crash after the commit entry and before
	// the mirror only delays it.
	mirroring func(dlqKey string) error
}

// setFollower wires a hooked Delta follower into s and returns it.
func setFollower(s *Sink, t delta.Tables, props map[string]string, opts delta.Options) *hookedFollower {
	h := &hookedFollower{Follower: delta.NewFollower(t, props, opts, nil)}
	s.SetFollower(h)
	return h
}

func (h *hookedFollower) Publish(ctx context.Context, t sink.FollowedTable, a sink.FollowedAppend) (ledger.DeltaCommit, error) {
	rec, err := h.Follower.Publish(ctx, t, a)
	if err == nil && h.published != nil {
		err = h.published(t.Key(), rec.Version)
	}
	return rec, err
}

func (h *hookedFollower) Rearrange(ctx context.Context, t sink.FollowedTable, r sink.FollowedRewrite) error {
	if h.rearranging != nil {
		if err := h.rearranging(t.Key()); err != nil {
			h.Forget(t.Key())
			return err
		}
	}
	return h.Follower.Rearrange(ctx, t, r)
}

func (h *hookedFollower) MirrorDeadLetters(ctx context.Context, key string, load sink.DeadLetterLoader, at time.Time) error {
	return h.Follower.MirrorDeadLetters(ctx, key, h.hookLoad(load), at)
}

func (h *hookedFollower) Settle(ctx context.Context, key string, load sink.DeadLetterLoader, at time.Time) error {
	return h.Follower.Settle(ctx, key, h.hookLoad(load), at)
}

// hookLoad makes the loaded dead-letter table run mirroring at its fence,
// the step before its log is synced.
func (h *hookedFollower) hookLoad(load sink.DeadLetterLoader) sink.DeadLetterLoader {
	return func(ctx context.Context) (sink.FollowedTable, error) {
		t, err := load(ctx)
		if t == nil || err != nil {
			return t, err
		}
		return hookedTable{FollowedTable: t, h: h}, nil
	}
}

type hookedTable struct {
	sink.FollowedTable
	h *hookedFollower
}

func (t hookedTable) Fence(ctx context.Context) error {
	if t.h.mirroring != nil {
		if err := t.h.mirroring(t.Key()); err != nil {
			return err
		}
	}
	return t.FollowedTable.Fence(ctx)
}

// readLog reads the Delta log under location apart from any follower.
func readLog(t *testing.T, location string, props map[string]string) *delta.Log {
	t.Helper()
	st, err := delta.OpenStore(context.Background(), location, props)
	if err != nil {
		t.Fatal(err)
	}
	l, err := delta.Open(context.Background(), st, delta.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
