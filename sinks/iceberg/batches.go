package iceberg

import (
	"iter"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/floe-io/floe/internal/records"
)

// maxBuilders caps the goroutines that build one flush's Arrow batches (a
// variable so that BenchmarkFlushJSON can compare one).
var maxBuilders = 4

// recordBatches converts records into Arrow batches of the table schema sc
// (as arrow schema as), batchRows records each, yielded in order. dlq
// selects the dead-letter columns.
//
// A flush of more than one batch builds them on up to GOMAXPROCS
// goroutines (at most maxBuilders) while iceberg-go encodes the ones
// before: building rows from JSON bytes is most of a flush's work, and on
// one goroutine it was the one thing a backlog drain waited for (the
// pipeline waits for the flush in flight before it starts the next: an
// execution trace of a real-broker drain showed the builder busy 2.8 s of
// 3.9, the pipeline waiting 2.9 s of 6 and the fetchers idle). At most
// as many batches as builders are built and not yet taken, so memory
// stays a few batches whatever the flush's size.
func recordBatches(sc *iceberg.Schema, as *arrow.Schema, recs []*records.Record, dlq bool) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		fields := sc.Fields()
		n := (len(recs) + batchRows - 1) / batchRows
		chunk := func(i int) []*records.Record { return recs[i*batchRows : min((i+1)*batchRows, len(recs))] }
		if builders := min(n, runtime.GOMAXPROCS(0), maxBuilders); builders > 1 {
			parallelBatches(n, builders, func(i int, js *jsonRows) (arrow.RecordBatch, error) {
				return buildBatch(fields, as, chunk(i), dlq, js)
			}, func() *jsonRows { return newJSONRows(fields) }, yield)
			return
		}
		js := newJSONRows(fields)
		for i := range n {
			b, err := buildBatch(fields, as, chunk(i), dlq, js)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(b, nil) {
				return
			}
		}
	}
}

type builtBatch struct {
	b   arrow.RecordBatch
	err error
}

// parallelBatches builds batches 0..n-1 with build on the given number of
// goroutines (each with its own scratch from scratch) and yields them in
// order, stopping at the first error or when yield says so. It returns
// once every goroutine it started has, releasing what was built and not
// yielded.
func parallelBatches(n, builders int, build func(int, *jsonRows) (arrow.RecordBatch, error), scratch func() *jsonRows, yield func(arrow.RecordBatch, error) bool) {
	out := make([]chan builtBatch, n)
	for i := range out {
		out[i] = make(chan builtBatch, 1)
	}
	// slots bounds the batches being built or built and not yet taken.
	slots := make(chan struct{}, builders)
	done := make(chan struct{})
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range builders {
		wg.Go(func() {
			js := scratch()
			for {
				select {
				case <-done:
					return
				default:
				}
				select {
				case slots <- struct{}{}:
				case <-done:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					<-slots
					return
				}
				b, err := build(i, js)
				out[i] <- builtBatch{b, err}
			}
		})
	}
	defer func() {
		close(done)
		wg.Wait()
		for _, c := range out {
			select {
			case r := <-c:
				if r.b != nil {
					r.b.Release()
				}
			default:
			}
		}
	}()
	for i := range n {
		r := <-out[i]
		<-slots
		if r.err != nil {
			yield(nil, r.err)
			return
		}
		if !yield(r.b, nil) {
			return
		}
	}
}
