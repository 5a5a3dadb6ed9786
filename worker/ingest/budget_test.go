package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/worker/source"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBudgetAccounting: any sequence of acquires (each taken only when it
// fits, or when nothing is held) and releases of what was taken keeps the
// held bytes equal to what is outstanding, never negative, and never past
// the limit plus one record. The first refused acquire after a release
// presses for what it lacks; later ones before the next release do not
// (the flushes asked for are under way).
func TestBudgetAccounting(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.Int64Range(1, 1<<20).Draw(t, "limit")
		var pressed int64
		b := newBudget(limit, func(need int64) { pressed = need })
		done, cancel := context.WithCancel(context.Background())
		cancel() // an acquire that does not fit returns at once
		var out []int64
		var sum, biggest int64
		waiting, pressedSince := false, false // a refused acquire, a press, since the last release
		for range rapid.IntRange(1, 200).Draw(t, "ops") {
			pressed = -1
			refused := false
			if len(out) > 0 && rapid.Bool().Draw(t, "release") {
				i := rapid.IntRange(0, len(out)-1).Draw(t, "which")
				if out[i] != 0 && waiting {
					waiting, pressedSince = false, false
				}
				b.release(out[i])
				sum -= out[i]
				out = append(out[:i], out[i+1:]...)
			} else {
				n := rapid.Int64Range(0, 2*limit).Draw(t, "n")
				before := b.Held()
				err := b.acquire(done, n)
				fits := before == 0 || before+n <= limit
				refused = !fits
				switch {
				case fits && err != nil:
					t.Fatalf("acquire %d with %d of %d held refused: %v", n, before, limit, err)
				case !fits && err == nil:
					t.Fatalf("acquire %d with %d of %d held taken", n, before, limit)
				case !fits && !pressedSince && pressed != before+n-limit:
					t.Fatalf("pressed for %d, want %d", pressed, before+n-limit)
				case !fits && pressedSince && pressed != -1:
					t.Fatalf("pressed again for %d before a release", pressed)
				case err == nil:
					out = append(out, n)
					sum += n
					biggest = max(biggest, n)
				}
			}
			waiting = waiting || refused
			pressedSince = pressedSince || pressed != -1
			held := b.Held()
			if held != sum || held < 0 || held > limit+biggest {
				t.Fatalf("held %d, outstanding %d, limit %d, biggest record %d", held, sum, limit, biggest)
			}
		}
	})
}

// FuzzBudget is TestBudgetAccounting's check over fuzzed sizes: taken and
// released in order, the budget comes back to zero.
func FuzzBudget(f *testing.F) {
	f.Add(int64(100), []byte{10, 200, 30, 90})
	f.Fuzz(func(t *testing.T, limit int64, sizes []byte) {
		if limit <= 0 {
			return
		}
		b := newBudget(limit, nil)
		done, cancel := context.WithCancel(context.Background())
		cancel()
		var taken []int64
		for _, s := range sizes {
			n := int64(s)
			if b.acquire(done, n) == nil {
				taken = append(taken, n)
			}
			if h := b.Held(); h < 0 || h > limit+255 {
				t.Fatalf("held %d, limit %d", h, limit)
			}
		}
		for _, n := range taken {
			b.release(n)
		}
		if h := b.Held(); h != 0 {
			t.Fatalf("held %d after releasing everything", h)
		}
	})
}

// TestBudgetWaitsForRelease: an acquire past the limit waits, asks for
// what it lacks, and goes on once enough is released; one whose context
// ends gives up having taken nothing.
func TestBudgetWaitsForRelease(t *testing.T) {
	var mu sync.Mutex
	var asked []int64
	b := newBudget(100, func(need int64) { mu.Lock(); asked = append(asked, need); mu.Unlock() })
	ctx := context.Background()
	if err := b.acquire(ctx, 80); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- b.acquire(ctx, 50) }()
	wait.For(t, 5*time.Second, "the waiter asks for 30 bytes", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(asked) > 0 && asked[0] == 30
	})
	select {
	case err := <-got:
		t.Fatalf("acquire past the limit returned %v before a release", err)
	default:
	}
	b.release(20) // 60 held: 50 more still does not fit
	b.release(40) // 20 held: it does
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h := b.Held(); h != 70 {
		t.Fatalf("held %d, want 70", h)
	}
	mu.Lock()
	before := len(asked)
	mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	go func() { got <- b.acquire(cctx, 40) }()
	wait.For(t, 5*time.Second, "the second waiter asks", func() bool { mu.Lock(); defer mu.Unlock(); return len(asked) > before })
	cancel()
	if err := <-got; err == nil {
		t.Fatal("a cancelled acquire succeeded")
	}
	if h := b.Held(); h != 70 {
		t.Fatalf("held %d after a cancelled acquire, want 70", h)
	}
}

// TestRecordCostByFormat: a record is charged what its value takes once
// held: as fetched for raw, a JSON text's decoded maps at 5 times its size,
// a binary registry encoding's at 10 (BenchmarkDecodedHeap).
func TestRecordCostByFormat(t *testing.T) {
	m := source.Message{Key: []byte("k"), Value: make([]byte, 200)}
	base := int64(recordOverhead + 1)
	for _, c := range []struct {
		format string
		want   int64
	}{
		{"raw", base + 200},
		{"json", base + decodedOverhead + 5*200},
		{"json_schema", base + decodedOverhead + 5*200},
		{"avro", base + decodedOverhead + 10*200},
		{"protobuf", base + decodedOverhead + 10*200},
		{"latest", base + decodedOverhead + 10*200},
	} {
		if got := RecordCost(c.format, m); got != c.want {
			t.Errorf("RecordCost(%s) = %d, want %d", c.format, got, c.want)
		}
	}
}
