package e2e

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// Interop scenario 8's subjects: six compatible versions each (a field
// added, int widened to long, float to double, a decimal's precision grown
// or a Duration added, a field removed), and a seventh Avro version used
// while the registry is stopped.

func s8AvroSchema(v int) string {
	qty, ratio, prec := "int", "float", 9
	if v >= 2 {
		qty = "long"
	}
	if v >= 3 {
		ratio = "double"
	}
	if v >= 4 {
		prec = 12
	}
	fields := []string{
		`{"name":"id","type":"long"}`, `{"name":"k","type":"string"}`,
		fmt.Sprintf(`{"name":"qty","type":"%s"}`, qty), fmt.Sprintf(`{"name":"ratio","type":"%s"}`, ratio),
		fmt.Sprintf(`{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":%d,"scale":2}}`, prec),
		`{"name":"day","type":{"type":"int","logicalType":"date"}}`,
		`{"name":"tm","type":{"type":"long","logicalType":"time-micros"}}`,
		`{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}`,
		`{"name":"lts","type":{"type":"long","logicalType":"local-timestamp-micros"}}`,
		`{"name":"uid","type":{"type":"string","logicalType":"uuid"}}`,
		`{"name":"blob","type":"bytes"}`, `{"name":"fx","type":{"type":"fixed","name":"F4","size":4}}`,
		`{"name":"color","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}}`,
		`{"name":"tags","type":{"type":"array","items":"string"}}`, `{"name":"attrs","type":{"type":"map","values":"long"}}`,
		`{"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"},{"name":"zip","type":"string"}]}}`,
		`{"name":"opt","type":["null","string"],"default":null}`, `{"name":"choice","type":["long","string"]}`,
	}
	if v >= 1 && v <= 4 {
		fields = append(fields, `{"name":"note","type":["null","string"],"default":null}`)
	}
	if v >= 6 {
		fields = append(fields, `{"name":"late","type":["null","long"],"default":null}`)
	}
	return `{"type":"record","name":"Event","namespace":"s8","fields":[` + strings.Join(fields, ",") + `]}`
}

var (
	s8AvroVersions = func() []string {
		var out []string
		for v := range 6 {
			out = append(out, s8AvroSchema(v))
		}
		return out
	}()
	s8AvroLate = s8AvroSchema(6)
)

func s8Key(topic string, i int) []byte { return []byte(fmt.Sprintf("%s-%d", topic, i)) }

func s8AvroRecord(t *testing.T, id, v, i int, topic string) []byte {
	t.Helper()
	r := map[string]any{
		"id": int64(i), "k": string(s8Key(topic, i)), "amount": big.NewRat(int64(i)*101, 100),
		"day": time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365),
		"tm":  time.Duration(i%86400)*time.Second + 5*time.Microsecond,
		"at":  time.UnixMilli(1_700_000_000_000 + int64(i)).UTC(), "lts": time.UnixMicro(1_700_000_000_000_000 + int64(i)).UTC(),
		"uid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "blob": []byte{byte(i), 0xff}, "fx": [4]byte{1, 2, 3, byte(i)},
		"color": []string{"RED", "GREEN"}[i%2], "tags": []any{fmt.Sprint("t", i%5), "x"}, "attrs": map[string]any{"n": int64(i % 97)},
		"addr": map[string]any{"city": fmt.Sprint("c", i%7), "zip": "z"}, "opt": nil,
	}
	if i%2 == 1 {
		r["opt"] = fmt.Sprint("o", i)
		r["choice"] = map[string]any{"string": fmt.Sprint("s", i)}
	} else {
		r["choice"] = map[string]any{"long": int64(i)}
	}
	if v < 2 {
		r["qty"] = int32(i % 100)
	} else {
		r["qty"] = int64(i % 100)
	}
	if v < 3 {
		r["ratio"] = float32(0.5)
	} else {
		r["ratio"] = 0.25
	}
	if v >= 1 && v <= 4 {
		r["note"] = fmt.Sprint("n", i)
	}
	if v >= 6 {
		r["late"] = int64(i)
	}
	return mustAvroT(t, id, s8AvroSchema(v), r)
}

var s8AvroTypes = map[string]string{
	"id": "long", "k": "string", "qty": "long", "ratio": "double", "amount": "decimal(12, 2)", "day": "date",
	"tm": "time", "at": "timestamptz", "lts": "timestamp", "uid": "uuid", "blob": "binary", "fx": "fixed[4]",
	"color": "string", "opt": "string", "note": "string", "late": "long",
}

// s8AvroValues: the expected values of one record per version, normalized
// as the readers do (integers, decimals as plain strings, dates ISO, times
// and timestamps in microseconds, uuids canonical, bytes in hex).
func s8AvroValues(topic string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for v, i := range []int{0, 151, 302, 453, 604, 755, 906} {
		ratio := "0.5"
		if v >= 3 {
			ratio = "0.25"
		}
		row := map[string]any{
			"id": fmt.Sprint(i), "qty": fmt.Sprint(i % 100), "ratio": ratio,
			"amount": fmt.Sprintf("%d.%02d", i*101/100, i*101%100),
			"day":    time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365).Format(time.DateOnly),
			"tm":     fmt.Sprint(int64(i%86400)*1_000_000 + 5), "at": fmt.Sprint((1_700_000_000_000 + int64(i)) * 1000),
			"lts": fmt.Sprint(1_700_000_000_000_000 + int64(i)), "uid": fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"blob": fmt.Sprintf("%02xff", byte(i)), "fx": fmt.Sprintf("010203%02x", byte(i)), "color": []string{"RED", "GREEN"}[i%2],
			"opt": nil, "note": nil, "late": nil,
		}
		if i%2 == 1 {
			row["opt"] = fmt.Sprint("o", i)
		}
		if v >= 1 && v <= 4 {
			row["note"] = fmt.Sprint("n", i)
		}
		if v >= 6 {
			row["late"] = fmt.Sprint(i)
		}
		out[string(s8Key(topic, i))] = row
	}
	return out
}

func s8ProtoSchema(v int) string {
	qty, ratio := "int32", "float"
	if v >= 2 {
		qty = "int64"
	}
	if v >= 3 {
		ratio = "double"
	}
	extra := ""
	if v >= 1 && v <= 4 {
		extra += "  optional string note = 16;\n"
	}
	if v >= 4 {
		extra += "  google.protobuf.Duration took = 17;\n"
	}
	return `syntax = "proto3";
package s8;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";

message Event {
  int64 id = 1;
  string k = 2;
  ` + qty + ` qty = 3;
  ` + ratio + ` ratio = 4;
  bool flag = 5;
  bytes blob = 6;
  Color color = 7;
  repeated string tags = 8;
  map<string, int64> attrs = 9;
  Addr addr = 10;
  google.protobuf.Timestamp at = 11;
  google.protobuf.StringValue maybe = 12;
  uint64 big = 13;
  oneof choice {
    string name = 14;
    int64 number = 15;
  }
` + extra + `  enum Color { RED = 0; GREEN = 1; }
  message Addr { string city = 1; string zip = 2; }
}
`
}

var s8ProtoVersions = func() []string {
	var out []string
	for v := range 6 {
		out = append(out, s8ProtoSchema(v))
	}
	return out
}()

func s8ProtoRecord(t *testing.T, id, v, i int, topic string) []byte {
	t.Helper()
	md, err := registrytest.Proto(s8ProtoSchema(v), "s8.Event")
	if err != nil {
		t.Fatal(err)
	}
	ratio := "0.5"
	if v >= 3 {
		ratio = "0.25"
	}
	js := fmt.Sprintf(`{"id": "%d", "k": "%s", "qty": %d, "ratio": %s, "flag": %t, "blob": "%s", "color": "%s",
		"tags": ["t%d", "x"], "attrs": {"n": "%d"}, "addr": {"city": "c%d", "zip": "z"},
		"at": "%s", "big": "%d"`, i, s8Key(topic, i), i%100, ratio, i%2 == 0, b64([]byte{byte(i), 0xff}), []string{"RED", "GREEN"}[i%2],
		i%5, i%97, i%7, time.UnixMicro(1_700_000_000_000_000+int64(i)).UTC().Format(time.RFC3339Nano), uint64(i)*1000+(1<<63))
	if i%2 == 1 {
		js += fmt.Sprintf(`, "maybe": "m%d", "name": "s%d"`, i, i)
	} else {
		js += fmt.Sprintf(`, "number": "%d"`, i)
	}
	if v >= 1 && v <= 4 {
		js += fmt.Sprintf(`, "note": "n%d"`, i)
	}
	if v >= 4 {
		js += fmt.Sprintf(`, "took": "%d.000005s"`, i%60)
	}
	p, err := registrytest.ProtoFromJSON(md, js+"}")
	if err != nil {
		t.Fatalf("protobuf record %d: %v", i, err)
	}
	return registrytest.Frame(id, []int{0}, p)
}

var s8ProtoTypes = map[string]string{
	"id": "long", "k": "string", "qty": "long", "ratio": "double", "flag": "boolean", "blob": "binary", "color": "string",
	"at": "timestamptz", "maybe": "string", "big": "decimal(20, 0)", "name": "string", "number": "long", "note": "string",
	"took": "long",
}

func s8ProtoValues(topic string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for v, i := range []int{0, 151, 302, 453, 604, 755} {
		ratio := "0.5"
		if v >= 3 {
			ratio = "0.25"
		}
		row := map[string]any{
			"id": fmt.Sprint(i), "qty": fmt.Sprint(i % 100), "ratio": ratio, "flag": fmt.Sprint(i%2 == 0),
			"blob": fmt.Sprintf("%02xff", byte(i)), "color": []string{"RED", "GREEN"}[i%2],
			"at": fmt.Sprint(1_700_000_000_000_000 + int64(i)), "big": fmt.Sprint(uint64(i)*1000 + (1 << 63)),
			"maybe": nil, "name": nil, "number": nil, "note": nil, "took": nil,
		}
		if i%2 == 1 {
			row["maybe"], row["name"] = fmt.Sprint("m", i), fmt.Sprint("s", i)
		} else {
			row["number"] = fmt.Sprint(i)
		}
		if v >= 1 && v <= 4 {
			row["note"] = fmt.Sprint("n", i)
		}
		if v >= 4 {
			row["took"] = fmt.Sprint(int64(i%60)*1_000_000 + 5)
		}
		out[string(s8Key(topic, i))] = row
	}
	return out
}

func s8Columns(proto bool) []string {
	cols := []string{"_kafka_topic", "_kafka_partition", "_kafka_offset", "_kafka_timestamp", "_kafka_key", "_kafka_headers"}
	types := s8AvroTypes
	if proto {
		types = s8ProtoTypes
	}
	for c := range types {
		cols = append(cols, c)
	}
	return append(cols, "tags", "addr")
}
