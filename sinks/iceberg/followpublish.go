package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/sinks/sink"
)

// ErrDeltaDiverged: the table's follower log holds commits the replicated
// state does not know (or lacks ones it does), in a way the committer
// cannot repair by itself; the commit is refused until an operator looks.
var ErrDeltaDiverged = errors.New("delta log and replicated state disagree")

// appendCommit is an append on its way to the catalog of record.
type appendCommit struct {
	key     string
	tbl     *table.Table
	entries []ledger.Entry
	g       gathered
	req     *ledger.CommitRequest
	at      time.Time
	// deletes are an upsert commit's position deletes, by data file.
	deletes []upsertsink.Delete
}

// publishFollower publishes the append as the table's next follower
// version before the replicated entry that commits it, and fills req.Delta
// so that entry records it. When the log already holds that sequence
// (published before a crash or a refused entry, by this committer or a
// stale one), the append becomes that commit: its entries, which must be
// the oldest pending, and its commit id; the returned entries are then
// those. Any failure leaves the log to be re-read and synced at the next
// attempt (the follower forgets it).
func (s *Sink) publishFollower(ctx context.Context, c appendCommit) ([]ledger.Entry, gathered, error) {
	name := ledger.DisplayName(c.key)
	t := s.followedTable(c.key, c.tbl, c.req.Committer)
	rec, err := s.follower.Publish(ctx, t, c.followed())
	if conflict, ok := errors.AsType[*sink.FollowerConflict](err); ok {
		c.entries, c.g, err = adopt(c, conflict)
		if err == nil {
			s.log.Info("committing the delta version published before a crash or a refused entry",
				"table", name, "version", conflict.Version, "sequence", conflict.Sequence, "commit_id", conflict.CommitID)
			rec, err = s.follower.Publish(ctx, t, c.followed())
		}
	}
	if err != nil {
		s.follower.Forget(c.key)
		return nil, c.g, fmt.Errorf("publishing the delta version of %s: %w", name, err)
	}
	c.req.Delta = &rec
	return c.entries, c.g, nil
}

// followed is the append as its follower version.
func (c appendCommit) followed() sink.FollowedAppend {
	out := sink.FollowedAppend{CommitID: c.req.CommitID, Offsets: c.g.offsets, Entries: c.g.ids, At: c.at}
	if len(c.deletes) > 0 {
		out.Deletes = map[string][]int64{}
		for _, d := range c.deletes {
			out.Deletes[d.Path] = append(out.Deletes[d.Path], d.Pos)
		}
	}
	for _, e := range c.entries {
		for _, f := range e.Files {
			out.Files = append(out.Files, sink.FollowedFile{FileDescriptor: f, WrittenAt: e.WrittenAt})
		}
	}
	return out
}

// adopt makes the append the commit the log already holds under its
// sequence: the same oldest pending entries (a prefix of c.entries) and
// commit id, with the same offsets. Anything else is ErrDeltaDiverged.
func adopt(c appendCommit, conflict *sink.FollowerConflict) ([]ledger.Entry, gathered, error) {
	n := len(conflict.Entries)
	ids := make([]string, 0, len(c.entries))
	for _, e := range c.entries {
		ids = append(ids, e.ID)
	}
	if conflict.CommitID == "" || n == 0 || n > len(ids) || !slices.Equal(ids[:n], conflict.Entries) {
		return nil, c.g, fmt.Errorf("%w: %v (its entries %v are not the oldest pending %v)", ErrDeltaDiverged, conflict, conflict.Entries, ids)
	}
	entries := c.entries[:n]
	g, err := gather(c.tbl, entries)
	if err != nil {
		return nil, c.g, err
	}
	if !maps.Equal(g.offsets, conflict.Offsets) {
		return nil, c.g, fmt.Errorf("%w: %v carries offsets %v, the entries give %v", ErrDeltaDiverged, conflict, conflict.Offsets, g.offsets)
	}
	c.req.CommitID = conflict.CommitID
	c.req.Entries = slices.Clone(conflict.Entries)
	return entries, g, nil
}

// rearrangeFollower publishes a committed compaction to the follower's
// log: its removes and adds, no row changed. It runs after the Iceberg
// commit, so a compaction refused there never reaches the log.
func (s *Sink) rearrangeFollower(ctx context.Context, key string, tbl *table.Table, rw *Rewrite, commitID string, committer ledger.Assignment, at time.Time) error {
	r := sink.FollowedRewrite{CommitID: commitID, At: at}
	for _, g := range rw.Groups {
		for _, df := range g.OldDataFiles {
			r.Removed = append(r.Removed, sink.FollowedFile{FileDescriptor: describe(df)})
		}
		for _, df := range g.NewDataFiles {
			r.Added = append(r.Added, sink.FollowedFile{FileDescriptor: describe(df), WrittenAt: at.UnixMilli()})
		}
	}
	if err := s.follower.Rearrange(ctx, s.followedTable(key, tbl, committer), r); err != nil {
		return fmt.Errorf("publishing the compaction of %s to its delta log: %w", ledger.DisplayName(key), err)
	}
	return nil
}

// deadLetters loads key's dead-letter table for its follower log, fenced
// as key's committer.
func (s *Sink) deadLetters(key string, committer ledger.Assignment) sink.DeadLetterLoader {
	return func(ctx context.Context) (sink.FollowedTable, error) {
		ident := DLQIdent(ledger.TableIdent(key))
		tbl, err := s.cat.LoadTable(ctx, ident)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			return nil, nil // no dead letter yet
		}
		if err != nil {
			return nil, err
		}
		return followed{s: s, key: ledger.TableKey(ident), tbl: tbl, fenceKey: key, committer: committer}, nil
	}
}

// Settle brings what follows table key's commits level with its committed
// state, as committer: the follower log of its dead-letter table, which is
// mirrored after each commit. Without it a crash, a restart or a failover
// between a commit and its mirror left the mirror one commit behind until
// the table's next commit, which a quiet table may not make for hours.
// The commit loop calls it every round; once level it costs a map lookup.
func (s *Sink) Settle(ctx context.Context, key string, committer ledger.Assignment, at time.Time) error {
	if s.follower == nil {
		return nil
	}
	return s.follower.Settle(ctx, key, s.deadLetters(key, committer), at)
}

// DeadLetterDelta is the version of the follower log of key's dead-letter
// table that this process last mirrored, false when it mirrored none.
// Call it on key's commit loop, the goroutine that mirrors that log.
func (s *Sink) DeadLetterDelta(key string) (int64, bool) {
	if s.follower == nil {
		return 0, false
	}
	return s.follower.DeadLetterVersion(key)
}
