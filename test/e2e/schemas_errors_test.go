package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// poisonStream is 34 records: good ones with a wrong magic byte, an
// unknown schema id, a truncated payload and a tombstone among them, at
// offsets 10, 16, 22 and 28.
func poisonStream(t *testing.T, reg *registrytest.Registry, id int, schema string) [][2][]byte {
	good := func(i int) [2][]byte {
		return [2][]byte{nil, mustAvro(t, reg, id, schema, map[string]any{"i": int64(i), "s": "some text"})}
	}
	var out [][2][]byte
	add := func(k int) {
		for range k {
			out = append(out, good(len(out)))
		}
	}
	add(10)
	wrong := good(0)
	wrong[1] = append([]byte{1}, wrong[1][1:]...)
	out = append(out, wrong) // 10
	add(5)
	out = append(out, [2][]byte{nil, registrytest.Frame(9999, nil, good(0)[1][5:])}) // 16
	add(5)
	trunc := good(0)
	trunc[1] = trunc[1][:len(trunc[1])-3]
	out = append(out, trunc) // 22
	add(5)
	out = append(out, [2][]byte{[]byte("deleted-key"), nil}) // 28: tombstone
	add(5)
	return out
}

// TestRegistryErrorModes: the same poison records under log, skip and
// suspend end where each mode says, and the counts add up to what was
// produced; a suspended table resumes past its bad record; tombstones are
// ignored and counted, or dead-lettered.
func TestRegistryErrorModes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	reg := registrytest.New()
	defer reg.Close()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "p_log", "p_skip", "p_suspend", "p_tomb")})
	schema := `{"type":"record","name":"R","fields":[{"name":"i","type":"long"},{"name":"s","type":"string"}]}`
	id := reg.Register("shared-value", "AVRO", schema)
	stream := poisonStream(t, reg, id, schema)
	for _, topic := range []string{"p_log", "p_skip", "p_suspend", "p_tomb"} {
		produceRaw(t, cl, topic, 0, stream...)
	}
	dir := t.TempDir()
	cfg := registryConfig(t, dir, kc.ListenAddrs(), reg, []config.Table{
		{Topic: "p_log", Namespace: "modes", Format: "avro", ErrorMode: "log"},
		{Topic: "p_skip", Namespace: "modes", Format: "avro", ErrorMode: "skip"},
		{Topic: "p_suspend", Namespace: "modes", Format: "avro", ErrorMode: "suspend"},
		{Topic: "p_tomb", Namespace: "modes", Format: "avro", ErrorMode: "dlq", Tombstones: "dlq"},
	})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	produced := int64(len(stream))

	t.Run("log", func(t *testing.T) {
		tr := waitTable(t, n, "modes.p_log", "all consumed", time.Minute, func(tr status.TableReport) bool {
			return tr.Rows+tr.DeadLetterRows == produced-1
		})
		if tr.Rows != 30 || tr.DeadLetterRows != 3 || tr.Tombstones != 1 || tr.Rows+tr.DeadLetterRows+tr.Tombstones != produced {
			t.Fatalf("rows %d + dead letters %d + tombstones %d, want 30 + 3 + 1", tr.Rows, tr.DeadLetterRows, tr.Tombstones)
		}
		var reasons []string
		for _, row := range tableRows(t, n, "modes", "p_log_dlq") {
			reasons = append(reasons, row["error"])
			if row["value"] == "null" {
				t.Fatal("a dead letter lost its value")
			}
		}
		joined := strings.Join(reasons, "\n")
		// The status keeps the last reasons too (the console shows them).
		var recent []string
		for _, d := range tr.LastDeadLetters {
			recent = append(recent, d.Error)
		}
		for _, want := range []string{"magic byte is 1", "unknown schema id 9999", "truncated Avro payload"} {
			if !strings.Contains(joined, want) {
				t.Fatalf("no dead letter says %q:\n%s", want, joined)
			}
			if !strings.Contains(strings.Join(recent, "\n"), want) {
				t.Fatalf("the status's last dead letters lack %q: %v", want, tr.LastDeadLetters)
			}
		}
	})
	t.Run("skip", func(t *testing.T) {
		tr := waitTable(t, n, "modes.p_skip", "all consumed", time.Minute, func(tr status.TableReport) bool {
			return tr.Rows == 30 && tr.Skipped == 3
		})
		if tr.DeadLetterRows != 0 || tr.Tombstones != 1 || tr.Rows+tr.Skipped+tr.Tombstones != produced {
			t.Fatalf("%+v", tr)
		}
	})
	t.Run("suspend, then resume past each bad record", func(t *testing.T) {
		for i, at := range []int64{10, 16, 22} {
			// The records before the bad one are flushed and recorded when
			// the table suspends, and committed by the commit loop moments
			// later: wait for both.
			tr := waitTable(t, n, "modes.p_suspend", "SUSPENDED", time.Minute, func(tr status.TableReport) bool {
				return tr.State == "SUSPENDED" && tr.SuspendedAt != nil && tr.SuspendedAt.Offset == at && tr.Rows >= at-int64(i)
			})
			if tr.Rows != at-int64(i) || tr.SuspendedAt.Topic != "p_suspend" || tr.SuspendedAt.Partition != 0 ||
				!strings.Contains(tr.Reason, "p_suspend/0 offset") || tr.SuspendedAt.Error == "" {
				t.Fatalf("suspended: %+v", tr)
			}
			if _, err := admin.ResumeTable(context.Background(), cfg.Node.AdminAddr, "modes.p_suspend", true); err != nil {
				t.Fatal(err)
			}
		}
		tr := waitTable(t, n, "modes.p_suspend", "the rest", time.Minute, func(tr status.TableReport) bool { return tr.Rows == 30 })
		if tr.State != "RUNNING" || tr.Skipped != 3 || tr.Tombstones != 1 || tr.Rows+tr.Skipped+tr.Tombstones != produced {
			t.Fatalf("after resumes: %+v", tr)
		}
	})
	t.Run("tombstones to the dead-letter table", func(t *testing.T) {
		tr := waitTable(t, n, "modes.p_tomb", "all consumed", time.Minute, func(tr status.TableReport) bool {
			return tr.Rows+tr.DeadLetterRows == produced
		})
		if tr.DeadLetterRows != 4 || tr.Tombstones != 1 {
			t.Fatalf("%+v", tr)
		}
		found := false
		for _, row := range tableRows(t, n, "modes", "p_tomb_dlq") {
			if strings.Contains(row["error"], "tombstone") && row["_kafka_offset"] == "28" && row["value"] == "null" {
				found = true
			}
		}
		if !found {
			t.Fatal("tombstone not in the dead-letter table")
		}
	})
}

// TestRegistryDown: a registry that stops answering mid-stream (and a new
// schema id arrives meanwhile) makes the table DEGRADED, never dead-letters
// a record for it, and loses nothing once it answers again.
func TestRegistryDown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	reg := registrytest.New()
	defer reg.Close()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "flaky")})
	v1 := `{"type":"record","name":"R","fields":[{"name":"i","type":"long"}]}`
	v2 := `{"type":"record","name":"R","fields":[{"name":"i","type":"long"},{"name":"j","type":["null","long"],"default":null}]}`
	id1 := reg.Register("flaky-value", "AVRO", v1)
	dir := t.TempDir()
	cfg := registryConfig(t, dir, kc.ListenAddrs(), reg, []config.Table{{Topic: "flaky", Namespace: "down", Format: "avro"}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	produceN := func(id int, sc string, from, k int) {
		var recs []*kgo.Record
		for i := from; i < from+k; i++ {
			recs = append(recs, &kgo.Record{Topic: "flaky", Partition: int32(i % 2), Value: mustAvro(t, reg, id, sc, map[string]any{"i": int64(i), "j": nil})})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produceN(id1, v1, 0, 100)
	testnode.WaitRows(t, n, "down.flaky", 100, time.Minute)

	reg.SetDown(true)
	id2 := reg.Register("flaky-value", "AVRO", v2) // unknown to Floe, which cannot ask
	produceN(id2, v2, 100, 100)
	tr := waitTable(t, n, "down.flaky", "DEGRADED", time.Minute, func(tr status.TableReport) bool { return tr.State == "DEGRADED" })
	if !strings.Contains(tr.Reason, "schema registry") {
		t.Fatalf("reason %q", tr.Reason)
	}
	// The node retries the held record; each failed answer is where a
	// misjudged (bad record) error would drop it: three more answers while
	// down prove that none does.
	asked := reg.Requests.Load()
	wait.For(t, time.Minute, "the node to ask the down registry again", func() bool { return reg.Requests.Load() >= asked+3 })
	if tr, _ := tableReport(mustReport(t, n), "down.flaky"); tr.DeadLetterRows != 0 || tr.DeadLettered != 0 || tr.Skipped != 0 {
		t.Fatalf("records dead-lettered or skipped while the registry was down: %+v", tr)
	}
	reg.SetDown(false)
	tr = waitTable(t, n, "down.flaky", "all rows, RUNNING", time.Minute, func(tr status.TableReport) bool {
		return tr.Rows == 200 && tr.State == "RUNNING"
	})
	if tr.DeadLetterRows != 0 {
		t.Fatalf("%+v", tr)
	}
}

// TestDeadLetterTopic: with dead_letter_topic, the dead letters of log mode
// also go to a Kafka topic, with where they came from and why.
func TestDeadLetterTopic(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	reg := registrytest.New()
	defer reg.Close()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "dl_src", "dl_out")})
	schema := `{"type":"record","name":"R","fields":[{"name":"i","type":"long"},{"name":"s","type":"string"}]}`
	id := reg.Register("dl_src-value", "AVRO", schema)
	stream := poisonStream(t, reg, id, schema)
	produceRaw(t, cl, "dl_src", 0, stream...)
	cfg := registryConfig(t, t.TempDir(), kc.ListenAddrs(), reg, []config.Table{
		{Topic: "dl_src", Namespace: "dl", Format: "avro", ErrorMode: "log", DeadLetterTopic: "dl_out"},
	})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	waitTable(t, n, "dl.dl_src", "all consumed", time.Minute, func(tr status.TableReport) bool { return tr.Rows+tr.DeadLetterRows == int64(len(stream))-1 })

	consumer, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.ConsumeTopics("dl_out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < 3 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := consumer.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			got = append(got, h["floe.source.topic"]+"/"+h["floe.source.partition"]+"@"+h["floe.source.offset"]+": "+h["floe.error"])
		})
	}
	joined := strings.Join(got, "\n")
	if len(got) != 3 || !strings.Contains(joined, "dl_src/0@10: ") || !strings.Contains(joined, "magic byte is 1") ||
		!strings.Contains(joined, "dl_src/0@16: ") || !strings.Contains(joined, "unknown schema id 9999") ||
		!strings.Contains(joined, "dl_src/0@22: ") || !strings.Contains(joined, "truncated") {
		t.Fatalf("dead-letter topic holds:\n%s", joined)
	}
}
