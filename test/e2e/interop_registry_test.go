package e2e

// TestInteropRegistry is interop scenario 8 (test/interop/scenarios.sh): Avro
// and Protobuf in the Confluent wire format against the run's real Kafka and
// real schema registry (Apicurio's Confluent-compatible API), an s3://
// warehouse on MinIO, one Floe node in the test process. It is skipped
// unless FLOE_S8_KAFKA is set; FLOE_S8_LOCAL=1 runs it on kfake, the fake
// registry and local files instead, for development.
//
//	FLOE_S8_KAFKA, FLOE_S8_REGISTRY      broker and registry URL (.../apis/ccompat/v7)
//	FLOE_S8_REGISTRY_PID                 the registry's pid: SIGSTOPped for FLOE_S8_OUTAGE (30s)
//	FLOE_S8_S3_ENDPOINT, _BUCKET, _REGION, _ACCESS_KEY, _SECRET_KEY
//	FLOE_S8_REPORT                       where to write each table's metadata location and expectation
//	FLOE_S8_WAREHOUSE                    with FLOE_S8_LOCAL: a directory for the warehouse (kept)
//
// What it checks itself: every version of each subject lands with the
// table following it (types, stable field ids); an incompatible version
// pauses only its topic with CONFIG_ISSUE naming the field; poison records
// under log, skip and suspend end where the mode says with counts adding
// up; the registry stopped mid-stream makes the table DEGRADED and loses
// nothing. The readers (PyIceberg, Iceberg Java) then check exactly-once,
// column types and typed values from the report's expectations.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/proto/admin"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// s8 is the scenario's environment.
type s8 struct {
	t        *testing.T
	cl       *kgo.Client
	brokers  []string
	regURL   string
	register func(subject, typ, text string) int
	stop     func(bool) // stop (true) or resume the registry
	produced map[string][2]int64
	run      string
}

func TestInteropRegistry(t *testing.T) {
	e := &s8{t: t, produced: map[string][2]int64{}, run: fmt.Sprintf("r%d", time.Now().UnixNano()%1_000_000)}
	wh := config.Warehouse{Location: "file://" + filepath.Join(t.TempDir(), "warehouse")}
	switch {
	case os.Getenv("FLOE_S8_KAFKA") != "":
		e.brokers, e.regURL = []string{os.Getenv("FLOE_S8_KAFKA")}, os.Getenv("FLOE_S8_REGISTRY")
		cl, err := kgo.NewClient(kgo.SeedBrokers(e.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		e.cl = cl
		e.register = e.registerHTTP
		pid, _ := strconv.Atoi(os.Getenv("FLOE_S8_REGISTRY_PID"))
		e.stop = func(stop bool) {
			if pid == 0 {
				t.Fatal("FLOE_S8_REGISTRY_PID is not set")
			}
			sig := syscall.SIGCONT
			if stop {
				sig = syscall.SIGSTOP
			}
			if err := syscall.Kill(pid, sig); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { e.stop(false) })
		if ep := os.Getenv("FLOE_S8_S3_ENDPOINT"); ep != "" {
			wh = config.Warehouse{Location: "s3://" + os.Getenv("FLOE_S8_S3_BUCKET") + "/s8-" + e.run,
				S3: config.S3{Endpoint: ep, Region: s8Env("FLOE_S8_S3_REGION", "us-east-1"),
					AccessKeyID: os.Getenv("FLOE_S8_S3_ACCESS_KEY"), SecretAccessKey: os.Getenv("FLOE_S8_S3_SECRET_KEY")}}
		}
	case os.Getenv("FLOE_S8_LOCAL") != "":
		kc, cl := testnode.Kafka(t, nil)
		reg := registrytest.New()
		t.Cleanup(reg.Close)
		e.brokers, e.cl, e.regURL = kc.ListenAddrs(), cl, reg.URL
		e.register = func(s, typ, text string) int { return reg.Register(s, typ, text) }
		e.stop = reg.SetDown
		if d := os.Getenv("FLOE_S8_WAREHOUSE"); d != "" { // keep the tables, for running the readers by hand
			wh.Location = "file://" + d
		}
		_ = kfake.NumBrokers
	default:
		t.Skip("interop scenario 8: set FLOE_S8_KAFKA (or FLOE_S8_LOCAL=1)")
	}
	topic := func(name string) string { return "s8_" + name + "_" + e.run }
	avroT, protoT, badT := topic("avro"), topic("proto"), topic("bad")
	logT, skipT, suspT := topic("log"), topic("skip"), topic("suspend")
	e.createTopics(3, avroT, protoT)
	e.createTopics(1, badT, logT, skipT, suspT)

	dir := t.TempDir()
	cfg := testnode.Config(t, dir, e.brokers, []config.Table{{Topic: "placeholder"}})
	cfg.Warehouse = wh
	cfg.SchemaRegistry.URL = e.regURL
	cfg.SchemaRegistry.Timeout = config.Duration(2 * time.Second)
	cfg.SchemaRegistry.RefreshInterval = config.Duration(5 * time.Second)
	cfg.CommitInterval = config.Duration(2 * time.Second)
	table := func(tp, format, mode string) config.Table {
		return config.Table{Topic: tp, Namespace: "interop", Name: tp, Format: format, ErrorMode: mode, StartOffset: "earliest"}
	}
	cfg.Tables = []config.Table{table(avroT, "avro", "log"), table(protoT, "protobuf", "log"), table(badT, "avro", "log"),
		table(logT, "avro", "log"), table(skipT, "avro", "skip"), table(suspT, "avro", "suspend")}
	// The Protobuf table is a Delta table too: its int32->int64 and
	// float->double widenings take Delta's typeWidening feature, read by
	// Spark in the scenario (delta_check.py). The Avro table cannot be: its
	// time-millis column has no Delta type, which stops a Delta table's
	// commits (docs/formats.md). Two plainer Avro tables are Delta tables
	// instead, read by delta-rs and Spark alike: the one an incompatible
	// version pauses, and the log-mode one, whose dead-letter table then
	// has a Delta log of its own.
	for _, i := range []int{1, 2, 3} {
		cfg.Tables[i].Formats = []string{"iceberg", "delta"}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	name := func(tp string) string { return "interop." + tp }

	// Six compatible versions of each subject, mid-stream: each version's
	// records are produced while Floe ingests the previous ones.
	const perVersion = 150
	var avroIDs, protoIDs []int
	for v := range s8AvroVersions {
		avroIDs = append(avroIDs, e.register(avroT+"-value", "AVRO", s8AvroVersions[v]))
		protoIDs = append(protoIDs, e.register(protoT+"-value", "PROTOBUF", s8ProtoVersions[v]))
		for i := v * perVersion; i < (v+1)*perVersion; i++ {
			e.produce(avroT, int32(i%3), s8Key(avroT, i), s8AvroRecord(t, avroIDs[v], v, i, avroT))
			e.produce(protoT, int32(i%3), s8Key(protoT, i), s8ProtoRecord(t, protoIDs[v], v, i, protoT))
		}
		e.waitAll(n, time.Minute, name(avroT), name(protoT))
	}

	// Poison records under each error mode.
	poisonSchema := `{"type":"record","name":"R","fields":[{"name":"i","type":"long"},{"name":"s","type":"string"}]}`
	pid := e.register(logT+"-value", "AVRO", poisonSchema)
	stream := poisonStream(t, nil, pid, poisonSchema)
	for _, tp := range []string{logT, skipT, suspT} {
		for _, kv := range stream {
			e.produce(tp, 0, kv[0], kv[1])
		}
	}

	// An incompatible version pauses only its topic.
	badV1 := `{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"k","type":"string"},{"name":"n","type":"long"}]}`
	badV2 := `{"type":"record","name":"Pay","fields":[{"name":"id","type":"long"},{"name":"k","type":"string"},{"name":"n","type":"string"}]}`
	b1 := e.register(badT+"-value", "AVRO", badV1)
	// In five commits, so that its Delta log has versions to travel back to.
	for i := range 50 {
		e.produce(badT, 0, s8Key(badT, i), mustAvroT(t, b1, badV1, map[string]any{"id": int64(i), "k": string(s8Key(badT, i)), "n": int64(i)}))
		if i%10 == 9 {
			seq := int64(i+1) / 10
			waitTable(t, n, name(badT), fmt.Sprintf("delta commit %d", seq), time.Minute, func(tr status.TableReport) bool {
				return tr.Delta != nil && tr.Delta.Sequence >= seq
			})
		}
	}
	e.waitAll(n, time.Minute, name(badT))
	b2 := e.register(badT+"-value", "AVRO", badV2)
	e.produceUnexpected(badT, 0, []byte("bad"), mustAvroT(t, b2, badV2, map[string]any{"id": int64(50), "k": "bad", "n": "x"}))
	tr := waitTable(t, n, name(badT), "CONFIG_ISSUE", 2*time.Minute, func(tr status.TableReport) bool { return tr.State == "CONFIG_ISSUE" })
	if want := fmt.Sprintf("field n: column is long, schema %d has string", b2); !strings.Contains(tr.Reason, want) {
		t.Fatalf("%s: reason %q does not say %q", tr.Table, tr.Reason, want)
	}
	t.Logf("incompatible version paused %s: %s", tr.Table, tr.Reason)

	// Other topics go on while it is paused: one more compatible version
	// each, and for Avro the registry stopped meanwhile.
	v7 := len(s8AvroVersions)
	lateID := e.register(avroT+"-value", "AVRO", s8AvroLate)
	outage := 30 * time.Second
	if d, err := time.ParseDuration(os.Getenv("FLOE_S8_OUTAGE")); err == nil {
		outage = d
	}
	t.Logf("stopping the registry for %s with a schema Floe has not seen yet", outage)
	e.stop(true)
	stopped := time.Now()
	for i := v7 * perVersion; i < (v7+1)*perVersion; i++ {
		e.produce(avroT, int32(i%3), s8Key(avroT, i), s8AvroRecord(t, lateID, v7, i, avroT))
		e.produce(protoT, int32(i%3), s8Key(protoT, i), s8ProtoRecord(t, protoIDs[len(protoIDs)-1], len(protoIDs)-1, i, protoT))
	}
	tr = waitTable(t, n, name(avroT), "DEGRADED", outage, func(tr status.TableReport) bool { return tr.State == "DEGRADED" })
	if !strings.Contains(tr.Reason, "schema registry") {
		t.Fatalf("%s DEGRADED for %q, want the schema registry", tr.Table, tr.Reason)
	}
	t.Logf("registry down: %s DEGRADED: %s", tr.Table, tr.Reason)
	// The outage's length is the scenario's fault: the registry stays down
	// that long whatever Floe does, so this is no condition to wait on.
	time.Sleep(time.Until(stopped.Add(outage)))
	if tr, _ := tableReport(mustReport(t, n), name(avroT)); tr.DeadLetterRows != 0 || tr.Skipped != 0 {
		t.Fatalf("records dead-lettered or skipped while the registry was down: %+v", tr)
	}
	e.stop(false)
	t.Logf("registry back after %s", time.Since(stopped).Round(time.Second))
	e.waitAll(n, 3*time.Minute, name(avroT), name(protoT))

	// The modes: counts add up to what was produced.
	produced := int64(len(stream))
	lt := waitTable(t, n, name(logT), "log mode done", time.Minute, func(tr status.TableReport) bool { return tr.Rows+tr.DeadLetterRows == produced-1 })
	st := waitTable(t, n, name(skipT), "skip mode done", time.Minute, func(tr status.TableReport) bool { return tr.Rows+tr.Skipped == produced-1 })
	for i, at := range []int64{10, 16, 22} {
		waitTable(t, n, name(suspT), fmt.Sprintf("suspended at %d", at), time.Minute, func(tr status.TableReport) bool {
			return tr.State == "SUSPENDED" && tr.SuspendedAt != nil && tr.SuspendedAt.Offset == at && tr.Rows == at-int64(i)
		})
		if _, err := admin.ResumeTable(context.Background(), cfg.Node.AdminAddr, name(suspT), true); err != nil {
			t.Fatal(err)
		}
	}
	su := waitTable(t, n, name(suspT), "suspend mode done", time.Minute, func(tr status.TableReport) bool { return tr.Rows == 30 && tr.State == "RUNNING" })
	for _, c := range []struct {
		tr   status.TableReport
		want [4]int64 // rows, dead letters, skipped, tombstones
	}{{lt, [4]int64{30, 3, 0, 1}}, {st, [4]int64{30, 0, 3, 1}}, {su, [4]int64{30, 0, 3, 1}}} {
		got := [4]int64{c.tr.Rows, c.tr.DeadLetterRows, c.tr.Skipped, c.tr.Tombstones}
		if got != c.want || got[0]+got[1]+got[2]+got[3] != produced {
			t.Errorf("%s: rows, dead letters, skipped, tombstones = %v, want %v (produced %d)", c.tr.Table, got, c.want, produced)
		}
	}
	t.Logf("error modes: %d records each; log %d+%d dlq+%d tombstone, skip %d+%d skipped+%d, suspend %d+%d skipped+%d",
		produced, lt.Rows, lt.DeadLetterRows, lt.Tombstones, st.Rows, st.Skipped, st.Tombstones, su.Rows, su.Skipped, su.Tombstones)

	// The report for the readers.
	rep := mustReport(t, n)
	var tables []map[string]any
	for _, tp := range []string{avroT, protoT, badT} {
		tr, _ := tableReport(rep, name(tp))
		ranges := map[string][2]int64{}
		for k, r := range e.produced {
			if strings.HasPrefix(k, tp+"/") {
				ranges[k] = r
			}
		}
		exp := map[string]any{"table": tr.Table, "ranges": ranges, "key_field": "k", "header_key": "k",
			"append_delta_equals_records": false, "columns": s8Columns(tp == protoT)}
		switch tp {
		case avroT:
			exp["column_types"], exp["values"] = s8AvroTypes, s8AvroValues(avroT)
		case protoT:
			exp["column_types"], exp["values"] = s8ProtoTypes, s8ProtoValues(protoT)
		default:
			exp["columns"] = []string{"id", "k", "n"}
			exp["column_types"] = map[string]string{"id": "long", "k": "string", "n": "long"}
		}
		entry := map[string]any{"table": tr.Table, "metadata_location": tr.MetadataLocation, "expect": exp}
		if tr.Delta != nil {
			entry["delta_sequence"] = tr.Delta.Sequence
		} else if slices.Contains(tr.Formats, "delta") {
			t.Errorf("%s: formats %v, but the status shows no Delta commit", tr.Table, tr.Formats)
		}
		tables = append(tables, entry)
	}
	dlq := e.deadLetters(n, logT, []int64{10, 16, 22}) // poisonStream's bad records
	if path := os.Getenv("FLOE_S8_REPORT"); path != "" && !t.Failed() {
		data, _ := json.MarshalIndent(map[string]any{"tables": tables, "dead_letters": []any{dlq}}, "", " ")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// deadLetters is the report's entry for the dead-letter table of topic's
// table (a Delta table): its metadata location and the source offsets of
// partition 0 that must be in it, each once.
func (e *s8) deadLetters(n *node.Node, topic string, offsets []int64) map[string]any {
	e.t.Helper()
	dlq, err := n.Catalog().LoadTable(context.Background(), []string{"interop", topic + "_dlq"})
	if err != nil {
		e.t.Fatalf("the dead-letter table of %s: %v", topic, err)
	}
	return map[string]any{"table": "interop." + topic + "_dlq", "metadata_location": dlq.MetadataLocation(),
		"expect": map[string]any{"table": "interop." + topic + "_dlq", "offsets": map[string][]int64{topic + "/0": offsets}}}
}

func s8Env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func (e *s8) createTopics(partitions int32, topics ...string) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	for _, tp := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tp, partitions, -1
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := req.RequestWith(ctx, e.cl)
	if err != nil {
		e.t.Fatalf("creating topics: %v", err)
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != 0 {
			e.t.Fatalf("creating topic %s: error code %d", rt.Topic, rt.ErrorCode)
		}
	}
}

// produce writes one record (header k = key) and extends the partition's
// acknowledged range, which the readers' expectation is built from.
func (e *s8) produce(topic string, partition int32, key, value []byte) {
	e.t.Helper()
	off := e.produceUnexpected(topic, partition, key, value)
	tp := fmt.Sprintf("%s/%d", topic, partition)
	r, ok := e.produced[tp]
	if !ok {
		r = [2]int64{off, off}
	}
	if off != r[1] {
		e.t.Fatalf("%s: acknowledged offset %d, expected %d", tp, off, r[1])
	}
	r[1] = off + 1
	e.produced[tp] = r
}

// produceUnexpected writes a record the table is not expected to hold.
func (e *s8) produceUnexpected(topic string, partition int32, key, value []byte) int64 {
	e.t.Helper()
	rec := &kgo.Record{Topic: topic, Partition: partition, Key: key, Value: value}
	if key != nil {
		rec.Headers = []kgo.RecordHeader{{Key: "k", Value: key}}
	}
	res := e.cl.ProduceSync(context.Background(), rec)
	if err := res.FirstErr(); err != nil {
		e.t.Fatal(err)
	}
	return res[0].Record.Offset
}

// waitAll waits until the tables committed every acknowledged offset.
func (e *s8) waitAll(n *node.Node, timeout time.Duration, tables ...string) {
	e.t.Helper()
	for _, tb := range tables {
		waitTable(e.t, n, tb, "caught up", timeout, func(tr status.TableReport) bool {
			for _, p := range tr.Partitions {
				r := e.produced[fmt.Sprintf("%s/%d", p.Topic, p.Partition)]
				if p.Committed != r[1] {
					return false
				}
			}
			return len(tr.Partitions) > 0
		})
	}
}

// registerHTTP registers a schema through the registry's Confluent API.
func (e *s8) registerHTTP(subject, typ, text string) int {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"schema": text, "schemaType": typ})
	resp, err := http.Post(e.regURL+"/subjects/"+subject+"/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(body))
	if err != nil {
		e.t.Fatalf("registering %s: %v", subject, err)
	}
	defer resp.Body.Close()
	var out struct {
		ID  int    `json:"id"`
		Msg string `json:"message"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusOK || out.ID == 0 {
		e.t.Fatalf("registering %s: %d %s", subject, resp.StatusCode, out.Msg)
	}
	return out.ID
}

func mustAvroT(t *testing.T, id int, schema string, v any) []byte {
	t.Helper()
	b, err := registrytest.Avro(schema, v)
	if err != nil {
		t.Fatalf("encoding %v: %v", v, err)
	}
	return registrytest.Frame(id, nil, b)
}
