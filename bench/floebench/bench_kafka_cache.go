package floebench

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/procstatus"
)

// The broker's page cache before each measured process (--broker-cache).
//
// Why this exists: the runs of one benchmark read topics that were produced
// minutes earlier, and what the broker then reads from is the kernel's
// page cache or the disk. On the machines this was measured on, a DAMON
// scheme pages out file pages nobody touched for about a minute
// (/sys/kernel/mm/damon/admin: action pageout, age ≥ 12 × 5 s), so a topic
// produced at the start of a run was partly on disk by the time its third
// or seventh process read it, and whichever process read it first paid for
// the disk and warmed it for the next one (Floe ran before the baseline).
// Each process now starts from the same state of the broker's cache.
const (
	// cacheWarm reads the whole topic through the broker just before the
	// process starts: the cache a broker that has just received the
	// backlog holds. The default.
	cacheWarm = "warm"
	// cacheCold drops the machine's page cache just before the process
	// starts (root and a local broker): the backlog read from disk.
	cacheCold = "cold"
	// cacheAsIs leaves the cache as the runs before left it (before the
	// flag existed, every run was measured this way).
	cacheAsIs = "as-is"
)

// validCache checks --broker-cache.
func validCache(mode string) error {
	switch mode {
	case cacheWarm, cacheCold, cacheAsIs:
		return nil
	}
	return fmt.Errorf("--broker-cache %q: want %s, %s or %s", mode, cacheWarm, cacheCold, cacheAsIs)
}

// prepareCache puts the broker's cache of topic in the state --broker-cache
// asks for and says how long it took (a slow warm-up is a topic that was
// on disk).
func (kb *kafkaBench) prepareCache(ctx context.Context, topic string, ends map[int32]int64) (string, error) {
	start := time.Now()
	switch kb.cache {
	case cacheWarm:
		dirty := writeBack()
		synced := time.Since(start)
		n, err := kb.readTopic(ctx, topic, ends)
		if err != nil {
			return "", fmt.Errorf("warming the broker's cache of %s: %w", topic, err)
		}
		return fmt.Sprintf("broker cache warmed: %s written back in %.1f s, %d records read in %.1f s",
			dirty, synced.Seconds(), n, (time.Since(start) - synced).Seconds()), nil
	case cacheCold:
		if err := dropPageCache(); err != nil {
			return "", err
		}
		return fmt.Sprintf("page cache dropped in %.1f s", time.Since(start).Seconds()), nil
	}
	return "broker cache as the runs before left it", nil
}

// readTopic fetches every record of topic below ends and discards it.
func (kb *kafkaBench) readTopic(ctx context.Context, topic string, ends map[int32]int64) (int64, error) {
	offsets, left := map[int32]kgo.Offset{}, map[int32]int64{}
	for p, e := range ends {
		if e > 0 {
			offsets[p], left[p] = kgo.NewOffset().AtStart(), e
		}
	}
	cl, err := kb.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(8<<20))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var n int64
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return n, fmt.Errorf("%d partitions not read to their ends: %w", len(left), err)
		}
		for _, fe := range fs.Errors() {
			return n, fmt.Errorf("fetching %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	return n, nil
}

// writeBack writes the machine's dirty pages to disk and says how much
// there was. Producing the backlogs dirties gigabytes of the broker's log,
// which the kernel writes back about 30 s later (vm.dirty_expire_centisecs):
// the warm state also means no writeback left to compete with the process
// measured. Suspected when run 21's first Floe drain ran at 248,033
// records/s while the same build drained that topic alone at 297,000-
// 317,000; run 22 found only 3-59 MiB dirty at each warm-up (the kernel had
// written the rest back while later topics were produced), so that was not
// the cause there, and run-to-run noise on these machines is that large.
func writeBack() string {
	dirty := "dirty pages"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		// The same "Name:   N kB" lines as /proc/PID/status.
		if m, err := procstatus.Parse(b, "Dirty"); err == nil {
			if d, ok := m["Dirty"]; ok {
				dirty = fmt.Sprintf("%d MiB of dirty pages", d>>20)
			}
		}
	}
	syscall.Sync()
	return dirty
}

// dropPageCache writes back dirty pages and drops the clean ones.
func dropPageCache() error {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
		return fmt.Errorf("--broker-cache cold drops the page cache, which needs root on the broker's machine: %w", err)
	}
	return nil
}
