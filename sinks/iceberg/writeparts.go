package iceberg

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
)

// A large flush of an unpartitioned table is written as several data
// files encoded at once, one goroutine each, rather than one file on one
// goroutine: iceberg-go encodes a file's Parquet on a single goroutine,
// and on a real-broker drain that serial encoding was what the pipeline
// waited for (it waits for the flush in flight before starting the next;
// docs/benchmarks.md's git history, "A flush in parts"). Partitioned tables are left to
// iceberg-go, whose fan-out writer already encodes each partition's file
// on its own goroutine.
//
// Every part is at least minPartRows records, so a flush that is not
// large (one from a quiet topic at the commit tick) stays one file, and
// a part never holds fewer rows than an Arrow batch. The parts of a flush
// are one ledger entry, committed in one snapshot like the single file
// they replace.
var (
	maxWriters  = 4         // parts per flush at most (a variable for tests)
	minPartRows = batchRows // records per part at least (a variable for tests)
)

// fileParts is how many parts a flush of n records is written in: one per
// core up to maxWriters, each at least minPartRows records; one for a
// partitioned table.
func fileParts(n int, unpartitioned bool, procs int) int {
	if !unpartitioned || minPartRows <= 0 {
		return 1
	}
	return max(1, min(procs, maxWriters, n/minPartRows))
}

// partUUID is the write id of part i of the write u: u itself for the
// first, and for the others a name-based UUID derived from u, so a retried
// write names its files as the attempt before did and overwrites them
// rather than leaving orphans beside them.
func partUUID(u uuid.UUID, i int) uuid.UUID {
	if i == 0 {
		return u
	}
	return uuid.NewSHA1(u, []byte("part-"+strconv.Itoa(i)))
}

// writeParts writes recs as k contiguous parts at once, each its own data
// files, and returns the files of every part in part order. The first
// error cancels the other parts; files already written by a failed write
// are never recorded and are removed by the committer's orphan cleanup,
// as those of any failed write are.
func (s *Sink) writeParts(ctx context.Context, tbl *table.Table, as *arrow.Schema, u uuid.UUID, name string, recs []*records.Record, dlq bool, k int) ([]ledger.FileDescriptor, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outs := make([][]ledger.FileDescriptor, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		part := recs[i*len(recs)/k : (i+1)*len(recs)/k]
		wg.Go(func() {
			outs[i], errs[i] = s.writeFiles(ctx, tbl, as, partUUID(u, i), name, part, dlq)
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	// The first part's own error, not a cancellation it caused in another.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(outs...), nil
}
