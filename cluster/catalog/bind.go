package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// ErrNoCommitter: a bound commit request names no table or no committer, so
// nothing could fence it. Refused before any metadata is written.
var ErrNoCommitter = errors.New("commit request names no committer")

// Bind returns two views of one commit session under *req, as iceberg-go
// catalogs: tables loaded through either commit as req's committer. A
// commit through stage writes the new metadata and holds its pointer swap;
// a commit through apply makes one CommitTables entry of every held swap,
// its own, and req's ledger commit (entries, committer, commit id, time,
// rewind generation). That is how a table and its dead-letter table move
// together: the sink commits the dead-letter table through stage, then the
// table through apply. A request without a table or committer is refused
// with ErrNoCommitter; a stale committer's with ledger.ErrStaleCommitter.
//
// The session reads *req when it applies, so a sink may fill in what it
// learns while building the transaction (the rows a delete removes). It
// serves one sink operation: after a successful apply its held swaps are
// cleared.
func (c *Catalog) Bind(req *ledger.CommitRequest) (stage, apply table.CatalogIO) {
	s := &session{c: c, req: req}
	return boundIO{s: s, stage: true}, boundIO{s: s}
}

// session is a bound commit request and the swaps staged under it.
type session struct {
	c   *Catalog
	req *ledger.CommitRequest

	mu     sync.Mutex
	staged []fsm.TableSwap
}

// boundIO is one view of a session: its commits stage or apply.
type boundIO struct {
	s     *session
	stage bool
}

// LoadTable implements table.CatalogIO: the table commits through b.
func (b boundIO) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if err := b.s.check(ident); err != nil {
		return nil, err
	}
	loc, err := b.s.c.MetadataLocation(ident)
	if err != nil {
		return nil, err
	}
	meta, err := b.s.c.metadataAt(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("loading table %s: %w", strings.Join(ident, "."), err)
	}
	return table.New(ident, meta, loc, b.s.c.fsF(loc), b), nil
}

// CommitTable implements table.CatalogIO: the fenced commit.
func (b boundIO) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if err := b.s.check(ident); err != nil {
		return nil, "", err
	}
	return b.s.c.commit(ctx, ident, reqs, updates, b.s, b.stage)
}

// check refuses a request nothing could fence, naming the table committed.
func (s *session) check(ident table.Identifier) error {
	switch {
	case s.req == nil:
		return fmt.Errorf("committing table %s: %w (no request)", strings.Join(ident, "."), ErrNoCommitter)
	case s.req.Table == "":
		return fmt.Errorf("committing table %s: %w (no table's role given)", strings.Join(ident, "."), ErrNoCommitter)
	case s.req.Committer.Node == "":
		return fmt.Errorf("committing table %s for %s: %w", strings.Join(ident, "."), ledger.DisplayName(s.req.Table), ErrNoCommitter)
	}
	return nil
}

// hold keeps a staged swap for the next apply.
func (s *session) hold(sw fsm.TableSwap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged = append(s.staged, sw)
}

// command is the CommitTables entry that applies swap: the held swaps
// first, then swap, carrying the request's ledger commit.
func (s *session) command(swap fsm.TableSwap) fsm.CommitTables {
	s.mu.Lock()
	swaps := append(slices.Clone(s.staged), swap)
	s.mu.Unlock()
	r := *s.req
	committer := r.Committer
	var delta *ledger.DeltaCommit
	if r.Delta != nil {
		d := *r.Delta
		delta = &d
	}
	return fsm.CommitTables{Swaps: swaps, Table: r.Table, Entries: r.Entries, Committer: &committer,
		CommitID: r.CommitID, At: r.At, RewindGen: r.RewindGen, DeletedRows: r.DeletedRows, Delta: delta}
}

// applied forgets the held swaps: the entry that carried them applied.
func (s *session) applied() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged = nil
}
