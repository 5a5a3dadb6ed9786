package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
)

// watchDemo prints progress every second until the producer is done and
// every produced record is committed (rows plus dead letters), or the
// deadline passes.
func watchDemo(ctx context.Context, out io.Writer, n *node.Node, produced *atomic.Int64, prodErr <-chan error, total, rate int) error {
	start := time.Now()
	tty := isTerminal(out)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.Now().Add(time.Duration(total/max(rate, 1))*time.Second + 90*time.Second)
	producing := true
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-prodErr:
			if err != nil {
				return fmt.Errorf("producing: %w", err)
			}
			producing = false
		case <-tick.C:
		}
		rep, err := n.Report(ctx)
		if err != nil {
			return err
		}
		var rows, dlq, lag int64
		state := "PENDING"
		for _, t := range rep.Tables {
			rows += t.Rows
			dlq += t.DeadLetterRows
			state = t.State
			for _, p := range t.Partitions {
				lag += p.Lag
			}
		}
		line := fmt.Sprintf("[%5.1fs] produced %6d  committed rows %6d  dead-lettered %3d  lag %6d  %-9s", time.Since(start).Seconds(), produced.Load(), rows, dlq, lag, state)
		if tty {
			fmt.Fprint(out, "\r"+line)
		} else {
			fmt.Fprintln(out, line)
		}
		if !producing && rows+dlq == produced.Load() {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out: %d of %d records committed", rows+dlq, produced.Load())
		}
	}
}

// isTerminal: on a terminal the progress line rewrites itself; in a log it
// repeats.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// produceOrders produces the orders numbered from to to (to < 0: until ctx
// ends) at rate per second, in batches of at most a second's worth. Orders
// from half on carry a coupon, so the table gains a column while the demo
// watches.
func produceOrders(ctx context.Context, cl *kgo.Client, from, to, half, rate int, produced, bad *atomic.Int64) error {
	batch := min(500, max(rate, 1))
	interval := time.Duration(float64(time.Second) * float64(batch) / float64(max(rate, 1)))
	for i := from; to < 0 || i < to; i += batch {
		end := i + batch
		if to >= 0 {
			end = min(end, to)
		}
		var recs []*kgo.Record
		for j := i; j < end; j++ {
			v, malformed := orderValue(j, half)
			if malformed {
				bad.Add(1)
			}
			recs = append(recs, &kgo.Record{Key: []byte(fmt.Sprintf("c-%d", j%997)), Value: []byte(v),
				Headers: []kgo.RecordHeader{{Key: "source", Value: []byte("floe-demo")}}})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return err
		}
		produced.Add(int64(len(recs)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return nil
}

// orderValue is order j's JSON value; one in 5,000 is malformed and goes to
// the dead-letter table.
func orderValue(j, half int) (string, bool) {
	country := []string{"DE", "FR", "US", "JP"}[j%4]
	switch {
	case j%5000 == 4999:
		return fmt.Sprintf("order %d was not JSON", j), true
	case j < half:
		return fmt.Sprintf(`{"order_id":%d,"customer":"c-%d","amount":%d.%02d,"items":[{"sku":"sku-%d","qty":%d}],"shipping":{"country":"%s","express":%t}}`,
			j, j%997, 10+j%90, j%100, j%50, 1+j%3, country, j%2 == 0), false
	default: // a field appears halfway: the table gains a column
		return fmt.Sprintf(`{"order_id":%d,"customer":"c-%d","amount":%d.%02d,"items":[{"sku":"sku-%d","qty":%d}],"shipping":{"country":"%s","express":%t},"coupon":"SPRING%d"}`,
			j, j%997, 10+j%90, j%100, j%50, 1+j%3, country, j%2 == 0, j%10), false
	}
}
