package e2e

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// TestRegistryTypesRoundTrip produces Avro, Protobuf and JSON Schema records
// in the Confluent wire format with every type Floe maps, materializes them
// through one node and reads them back with iceberg-go.
func TestRegistryTypesRoundTrip(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	reg := registrytest.New()
	defer reg.Close()
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "avro_all", "proto_all", "json_all", "bare")})

	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	avroID := reg.Register("avro_all-value", "AVRO", registrytest.AvroAllTypes)
	keySchema := `{"type":"record","name":"Key","fields":[{"name":"id","type":"long"}]}`
	keyID := reg.Register("avro_all-key", "AVRO", keySchema)
	full := map[string]any{
		"b": true, "i": int32(-5), "l": int64(1) << 40, "f": float32(1.5), "d": 2.25, "s": "héllo", "by": []byte{0, 255},
		"opt": "x", "u": map[string]any{"string": "s1"}, "e": "GREEN", "arr": []any{int64(1), int64(2)},
		"m": map[string]any{"k": "v"}, "item": map[string]any{"sku": "A1"}, "fx": [4]byte{1, 2, 3, 4},
		"dec": big.NewRat(-12345, 100), "decf": big.NewRat(123456789, 10000),
		"id": "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11", "day": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		"tmil": 13 * time.Hour, "tmic": 13*time.Hour + 5*time.Microsecond,
		"tsms": ts.Truncate(time.Millisecond), "tsus": ts, "ltms": ts.Truncate(time.Millisecond), "ltus": ts,
		"next": map[string]any{"shop.Order": nil},
	}
	sparse := map[string]any{}
	for k, v := range full {
		sparse[k] = v
	}
	sparse["opt"], sparse["u"], sparse["next"], sparse["arr"], sparse["m"] = nil, map[string]any{"long": int64(7)}, nil, []any{}, map[string]any{}
	child := map[string]any{}
	for k, v := range sparse {
		child[k] = v
	}
	child["s"] = "child"
	sparse["next"] = map[string]any{"shop.Order": child}
	full["next"] = nil
	produceRaw(t, cl, "avro_all", 0,
		[2][]byte{mustAvro(t, reg, keyID, keySchema, map[string]any{"id": int64(1)}), mustAvro(t, reg, avroID, registrytest.AvroAllTypes, full)},
		[2][]byte{[]byte("plain key"), mustAvro(t, reg, avroID, registrytest.AvroAllTypes, sparse)},
	)

	protoID := reg.Register("proto_all-value", "PROTOBUF", registrytest.ProtoAllTypes)
	md, err := registrytest.Proto(registrytest.ProtoAllTypes, "shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	protoJSON := []string{
		`{"b": true, "i": -5, "l": "1099511627776", "u32": 4000000000, "u64": "18446744073709551615", "si": -3, "f": 1.5,
		  "d": 2.25, "s": "x", "by": "AP8=", "color": "GREEN", "arr": ["1", "2"], "m": {"k": 7}, "item": {"sku": "A1"},
		  "items": [{"sku": "B"}], "ts": "2024-02-29T13:14:15.123456Z", "dur": "1.5s", "wl": "9", "ws": "w",
		  "attrs": {"a": 1}, "number": "42", "next": {"s": "child"}}`,
		`{}`,
	}
	for _, js := range protoJSON {
		p, err := registrytest.ProtoFromJSON(md, js)
		if err != nil {
			t.Fatal(err)
		}
		produceRaw(t, cl, "proto_all", 0, [2][]byte{nil, registrytest.Frame(protoID, []int{0}, p)})
	}

	jsonID := reg.Register("json_all-value", "JSON", registrytest.JSONAllTypes)
	produceRaw(t, cl, "json_all", 0,
		[2][]byte{nil, registrytest.Frame(jsonID, nil, []byte(`{"b": true, "n": 7, "x": 1.5, "s": "s", "alt": "a", "e": "RED",
			"arr": [1, 2], "m": {"k": "v"}, "item": {"sku": "A"}, "day": "2024-02-29", "at": "2024-02-29T13:14:15.123456Z",
			"tm": "13:00:00.000005", "id": "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11", "bin": "AP8=", "next": {"n": 1, "alt": 5}}`))},
		[2][]byte{nil, registrytest.Frame(jsonID, nil, []byte(`{"n": 8}`))},
	)

	// format latest: bare payloads (no header), decoded with the subject's
	// latest schema.
	bareSchema := `{"type":"record","name":"B","fields":[{"name":"a","type":"long"},{"name":"s","type":"string"}]}`
	reg.Register("bare-v", "AVRO", bareSchema)
	for i := range 2 {
		p, err := registrytest.Avro(bareSchema, map[string]any{"a": int64(i), "s": "bare"})
		if err != nil {
			t.Fatal(err)
		}
		produceRaw(t, cl, "bare", 0, [2][]byte{nil, p})
	}

	dir := t.TempDir()
	cfg := registryConfig(t, dir, kc.ListenAddrs(), reg, []config.Table{
		{Topic: "avro_all", Namespace: "reg", Format: "avro"},
		{Topic: "proto_all", Namespace: "reg", Format: "protobuf"},
		{Topic: "json_all", Namespace: "reg", Format: "json_schema"},
		{Topic: "bare", Namespace: "reg", Format: "latest", Subject: "{topic}-v"},
	})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	for _, tb := range []string{"reg.avro_all", "reg.proto_all", "reg.json_all", "reg.bare"} {
		testnode.WaitRows(t, n, tb, 2, time.Minute)
	}

	check := func(name string, got map[int64]map[string]string, want map[int64]map[string]string) {
		t.Helper()
		for off, cols := range want {
			for col, w := range cols {
				if g := got[off][col]; g != w {
					t.Errorf("%s offset %d column %s = %s, want %s", name, off, col, g, w)
				}
			}
		}
	}
	check("avro", tableCells(t, n, "reg", "avro_all"), map[int64]map[string]string{
		0: {"b": "true", "i": "-5", "l": "1099511627776", "f": "1.5", "d": "2.25", "s": `"héllo"`, "by": `"AP8="`,
			"opt": `"x"`, "u": `{"long":null,"string":"s1"}`, "e": `"GREEN"`, "arr": "[1,2]", "m": `[{"key":"k","value":"v"}]`,
			"item": `{"sku":"A1"}`, "fx": `"AQIDBA=="`, "dec": `"-123.45"`, "decf": `"12345.6789"`,
			"id": `"0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11"`, "day": `"2024-02-29"`, "tmil": `"13:00:00"`,
			"tmic": `"13:00:00.000005"`, "tsms": `"2024-02-29T13:14:15.123Z"`, "tsus": `"2024-02-29T13:14:15.123456Z"`,
			"ltms": `"2024-02-29T13:14:15.123"`, "ltus": `"2024-02-29T13:14:15.123456"`, "next": "null",
			"_kafka_key_decoded": `{"id":1}`, "_kafka_key": `"` + b64(mustAvro(t, reg, keyID, keySchema, map[string]any{"id": int64(1)})) + `"`},
		1: {"opt": "null", "u": `{"long":7,"string":null}`, "arr": "[]", "m": "[]", "_kafka_key_decoded": "null",
			"_kafka_key": `"cGxhaW4ga2V5"`},
	})
	check("protobuf", tableCells(t, n, "reg", "proto_all"), map[int64]map[string]string{
		0: {"b": "true", "i": "-5", "l": "1099511627776", "u32": "4000000000", "u64": `"18446744073709551615"`, "si": "-3",
			"f": "1.5", "d": "2.25", "s": `"x"`, "by": `"AP8="`, "opt": "null", "color": `"GREEN"`, "arr": "[1,2]",
			"m": `[{"key":"k","value":7}]`, "item": `{"sku":"A1"}`, "items": `[{"sku":"B"}]`,
			"ts": `"2024-02-29T13:14:15.123456Z"`, "dur": "1500000", "wl": "9", "ws": `"w"`, "attrs": `"{\"a\":1}"`,
			"name": "null", "number": "42"},
		1: {"b": "false", "i": "0", "s": `""`, "item": "null", "ts": "null", "wl": "null", "arr": "[]", "number": "null"},
	})
	check("json_schema", tableCells(t, n, "reg", "json_all"), map[int64]map[string]string{
		0: {"b": "true", "n": "7", "x": "1.5", "s": `"s"`, "opt": "null", "alt": `{"integer":null,"string":"a"}`, "e": `"RED"`,
			"arr": "[1,2]", "m": `[{"key":"k","value":"v"}]`, "item": `{"sku":"A"}`, "day": `"2024-02-29"`,
			"at": `"2024-02-29T13:14:15.123456Z"`, "tm": `"13:00:00.000005"`, "id": `"0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11"`,
			"bin": `"AP8="`},
		1: {"n": "8", "b": "null", "alt": "null"},
	})
	check("latest", tableCells(t, n, "reg", "bare"), map[int64]map[string]string{
		0: {"a": "0", "s": `"bare"`}, 1: {"a": "1", "s": `"bare"`},
	})
	if t.Failed() {
		for _, tb := range [][]string{{"reg", "avro_all"}, {"reg", "proto_all"}, {"reg", "json_all"}} {
			for off, row := range tableCells(t, n, tb...) {
				t.Logf("%v @%d: %v", tb, off, row)
			}
		}
	}
}
