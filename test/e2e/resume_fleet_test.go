//go:build long

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/worker"
)

// TestResumeSkipFleet: three nodes share a topic in suspend mode with
// poison records in three partitions; the nodes that fetch them suspend
// the table. `resume --skip` is sent to one node (one not suspended when
// there is one): it finds the suspensions in the other members' status
// and replicates the skips, every node resumes, and the table ends with
// every other offset exactly once.
func TestResumeSkipFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end fleet")
	}
	f := newFleet(t)
	topic := f.topics[0]
	name := tableOf(topic)
	f.cfgExtra = map[string]any{"tables": []map[string]any{{"topic": topic, "namespace": fleetNamespace, "name": topic,
		"format": "json", "start_offset": "earliest", "error_mode": "suspend"}}}
	const per = 30
	poison := map[int32]int64{1: 10, 4: 5, 6: 20}
	var recs []*kgo.Record
	for p := range int32(fleetPartitions) {
		for o := range int64(per) {
			v := fmt.Sprintf(`{"k":"%d-%d","n":%d}`, p, o, o)
			if off, ok := poison[p]; ok && off == o {
				v = `{"broken": `
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)})
		}
	}
	if err := f.client.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	f.startNew(3, 3, "n", false)

	skipped := map[string]bool{}
	viaOther := false
	// Each round resumes the table through one node while some node
	// shows it suspended at a poison record.
	wait.Until(t, 3*time.Minute, "every poison record skipped", func() error {
		if len(skipped) == len(poison) {
			return nil
		}
		f.checkCrashes()
		var suspended, other []*fleetNode
		own := map[*fleetNode]string{}
		for _, n := range f.running() {
			// A node still joining the group answers status but refuses
			// writes: resume only through ready nodes.
			if !ready(n) {
				continue
			}
			rep, err := f.fetch(n, 3*time.Second)
			if err != nil {
				continue
			}
			tr, ok := tableReport(rep, name)
			if ok && tr.State == "SUSPENDED" && tr.SuspendedAt != nil {
				suspended = append(suspended, n)
				own[n] = fmt.Sprintf("%d/%d", tr.SuspendedAt.Partition, tr.SuspendedAt.Offset)
			} else {
				other = append(other, n)
			}
		}
		if len(suspended) == 0 {
			return fmt.Errorf("skipped %v of the poison records %v; no node shows the table suspended", skipped, poison)
		}
		via := suspended[0]
		if len(other) > 0 {
			via = other[0]
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := admin.ResumeTable(ctx, via.adminAddr, name, true)
		cancel()
		if err != nil && strings.Contains(err.Error(), "is not suspended at a bad record") {
			// The reports above were read before a resume sent in the
			// previous round reached every node: nothing is suspended
			// now, and the next round reads the reports again.
			return fmt.Errorf("resume through %s found nothing suspended (%v); reading the reports again", via.id, err)
		}
		if err != nil {
			t.Fatalf("resume through %s: %v", via.id, err)
		}
		var res worker.ResumeResult
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Skips {
			key := fmt.Sprintf("%d/%d", s.Partition, s.Offset)
			if off, ok := poison[s.Partition]; !ok || off != s.Offset {
				t.Fatalf("resume through %s skips %s, not a poison record", via.id, key)
			}
			skipped[key] = true
			if key != own[via] {
				viaOther = true
			}
		}
		f.event("resumed through %s (suspended: %d nodes): skips %+v", via.id, len(suspended), res.Skips)
		return fmt.Errorf("skipped %v of the poison records %v", skipped, poison)
	})
	if !viaOther {
		t.Fatal("no resume found a suspension on a node other than the one it was sent to")
	}

	want := int64(fleetPartitions*per - len(poison))
	var tr status.TableReport
	wait.Until(t, 2*time.Minute, fmt.Sprintf("%s to hold %d rows", name, want), func() error {
		rep, _, err := f.status()
		if err != nil {
			return err
		}
		if tr, _ = tableReport(rep, name); tr.Rows != want || tr.State == "SUSPENDED" {
			return fmt.Errorf("%+v", tr)
		}
		return nil
	})
	ctx := context.Background()
	tbl, err := table.NewFromLocation(ctx, table.Identifier{fleetNamespace, topic}, tr.MetadataLocation,
		icebergio.LoadFSFunc(node.IOProps(f.wh), tr.MetadataLocation), nil)
	if err != nil {
		t.Fatal(err)
	}
	counts, _, err := offsetcheck.Counts(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(fleetPartitions) {
		for o := range int64(per) {
			want := 1
			if off, ok := poison[p]; ok && off == o {
				want = 0
			}
			if got := counts[fmt.Sprintf("%s/%d", topic, p)][o]; got != want {
				t.Fatalf("%s/%d offset %d appears %d times, want %d", topic, p, o, got, want)
			}
		}
	}
	f.event("every other offset exactly once; skips %v", skipped)
}
