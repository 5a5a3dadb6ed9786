package schemas

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/worker/schemas/registrytest"
)

func newDecoder(t *testing.T) (*Decoder, *registrytest.Registry) {
	t.Helper()
	fake := registrytest.New()
	t.Cleanup(fake.Close)
	return NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL, Timeout: time.Second})), fake
}

func TestAvroAllTypes(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	id := fake.Register("orders-value", "AVRO", registrytest.AvroAllTypes)
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	in := map[string]any{
		"b": true, "i": int32(-5), "l": int64(1) << 40, "f": float32(1.5), "d": 2.25, "s": "héllo", "by": []byte{0, 255},
		"opt": "x", "u": map[string]any{"string": "s1"}, "e": "GREEN", "arr": []any{int64(1), int64(2)},
		"m": map[string]any{"k": "v"}, "item": map[string]any{"sku": "A1"}, "fx": [4]byte{1, 2, 3, 4},
		"dec": big.NewRat(-12345, 100), "decf": big.NewRat(123456789, 10000),
		"id": "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11", "day": time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		"tmil": 13 * time.Hour, "tmic": 13*time.Hour + 5*time.Microsecond,
		"tsms": ts.Truncate(time.Millisecond), "tsus": ts, "ltms": ts.Truncate(time.Millisecond), "ltus": ts,
		"next": nil,
	}
	payload, err := registrytest.Avro(registrytest.AvroAllTypes, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dec.Value(ctx, "avro", "", registrytest.Frame(id, nil, payload))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"b": true, "i": int32(-5), "l": int64(1) << 40, "f": float32(1.5), "d": 2.25, "s": "héllo", "by": []byte{0, 255},
		"opt": "x", "u": map[string]any{"string": "s1"}, "e": "GREEN", "arr": []any{int64(1), int64(2)},
		"m": []records.MapEntry{{Key: "k", Value: "v"}}, "item": map[string]any{"sku": "A1"}, "fx": []byte{1, 2, 3, 4},
		"dec": big.NewInt(-12345), "decf": big.NewInt(123456789),
		"id":  [16]byte{0x0b, 0x5c, 0x2a, 0x94, 0x4a, 0x8c, 0x4f, 0x43, 0x9d, 0x6b, 0x2f, 0x0f, 0x5e, 0x1b, 0x7c, 0x11},
		"day": records.Days(19782), "tmil": 13 * time.Hour, "tmic": 13*time.Hour + 5*time.Microsecond,
		"tsms": ts.Truncate(time.Millisecond), "tsus": ts, "ltms": ts.Truncate(time.Millisecond), "ltus": ts,
	}
	if !reflect.DeepEqual(got.Value, want) {
		for k := range want {
			if !reflect.DeepEqual(got.Value[k], want[k]) {
				t.Errorf("%s: got %#v, want %#v", k, got.Value[k], want[k])
			}
		}
		t.FailNow()
	}
	wantShape := "struct<b: boolean, i: int, l: long, f: float, d: double, s: string, by: binary, opt: string, " +
		"u: struct<long: long, string: string>, e: string, arr: list<long>, m: map<string, string>, item: struct<sku: string>, " +
		"fx: fixed[4], dec: decimal(10, 2), decf: decimal(18, 4), id: uuid, day: date, tmil: time, tmic: time, " +
		"tsms: timestamptz, tsus: timestamptz, ltms: timestamp, ltus: timestamp, next: struct<"
	if s := got.Shape.String(); !strings.HasPrefix(s, wantShape) {
		t.Fatalf("shape\n%s\nwant prefix\n%s", s, wantShape)
	}
	if got.SchemaID != id {
		t.Fatalf("schema id %d", got.SchemaID)
	}
}

// A recursive record is unrolled MaxRecursion levels; data deeper than
// that is a bad record naming the field.
func TestAvroRecursionCut(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	sc := `{"type":"record","name":"Node","fields":[{"name":"v","type":"long"},{"name":"next","type":["null","Node"]}]}`
	id := fake.Register("n-value", "AVRO", sc)
	nest := func(depth int) map[string]any {
		var n any
		for i := depth; i > 0; i-- {
			m := map[string]any{"v": int64(i), "next": nil}
			if n != nil {
				m["next"] = map[string]any{"Node": n}
			}
			n = m
		}
		return n.(map[string]any)
	}
	ok, err := registrytest.Avro(sc, nest(MaxRecursion))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Value(ctx, "avro", "", registrytest.Frame(id, nil, ok)); err != nil {
		t.Fatalf("depth %d: %v", MaxRecursion, err)
	}
	deep, _ := registrytest.Avro(sc, nest(MaxRecursion+1))
	_, err = dec.Value(ctx, "avro", "", registrytest.Frame(id, nil, deep))
	if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), "next.next.next.next: recursive type Node nests deeper than 4 levels") {
		t.Fatalf("too deep: %v", err)
	}
}

func TestProtobufAllTypes(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	id := fake.Register("orders-value", "PROTOBUF", registrytest.ProtoAllTypes)
	md, err := registrytest.Proto(registrytest.ProtoAllTypes, "shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	payload, err := registrytest.ProtoFromJSON(md, `{"b": true, "i": -5, "l": "1099511627776", "u32": 4000000000,
		"u64": "18446744073709551615", "si": -3, "f": 1.5, "d": 2.25, "s": "x", "by": "AP8=", "color": "GREEN",
		"arr": ["1", "2"], "m": {"k": 7}, "item": {"sku": "A1"}, "items": [{"sku": "B"}, {}],
		"ts": "2024-02-29T13:14:15.123456Z", "dur": "1.5s", "wl": "9", "ws": "w",
		"attrs": {"a": 1, "b": [true]}, "number": "42"}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dec.Value(ctx, "protobuf", "", registrytest.Frame(id, []int{0}, payload))
	if err != nil {
		t.Fatal(err)
	}
	u64, _ := new(big.Int).SetString("18446744073709551615", 10)
	want := map[string]any{
		"b": true, "i": int32(-5), "l": int64(1) << 40, "u32": int64(4000000000), "u64": u64, "si": int32(-3),
		"f": float32(1.5), "d": 2.25, "s": "x", "by": []byte{0, 255}, "color": "GREEN", "arr": []any{int64(1), int64(2)},
		"m": []records.MapEntry{{Key: "k", Value: int32(7)}}, "item": map[string]any{"sku": "A1"},
		"items": []any{map[string]any{"sku": "B"}, map[string]any{"sku": ""}},
		"ts":    time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC), "dur": int64(1500000), "wl": int64(9), "ws": "w",
		"attrs": `{"a":1,"b":[true]}`, "number": int64(42),
	}
	if !reflect.DeepEqual(got.Value, want) {
		for k := range want {
			if !reflect.DeepEqual(got.Value[k], want[k]) {
				t.Errorf("%s: got %#v, want %#v", k, got.Value[k], want[k])
			}
		}
		for k := range got.Value {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s = %#v", k, got.Value[k])
			}
		}
		t.FailNow()
	}
	if s := got.Shape.String(); !strings.HasPrefix(s, "struct<b: boolean, i: int, l: long, u32: long, u64: decimal(20, 0), si: int, f: float, d: double, s: string, by: binary, opt: string, color: string, arr: list<long>, m: map<string, int>, item: struct<sku: string>, items: list<struct<sku: string>>, ts: timestamptz, dur: long, wl: long, ws: string, attrs: string, name: string, number: long, next: struct<") {
		t.Fatalf("shape %s", s)
	}
	// The second message of the file, by index.
	other, _ := registrytest.Proto(registrytest.ProtoAllTypes, "shop.Other")
	p2, _ := registrytest.ProtoFromJSON(other, `{"x": "y"}`)
	got, err = dec.Value(ctx, "protobuf", "", registrytest.Frame(id, []int{1}, p2))
	if err != nil || got.Value["x"] != "y" || got.Shape.String() != "struct<x: string>" {
		t.Fatalf("message index 1: %v %v %s", got.Value, err, got.Shape)
	}
}

func TestJSONSchemaAllTypes(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	id := fake.Register("orders-value", "JSON", registrytest.JSONAllTypes)
	doc := `{"b": true, "n": 7, "x": 1.5, "s": "s", "opt": null, "alt": "a", "e": "RED", "arr": [1, 2], "m": {"k": "v"},
		"item": {"sku": "A"}, "day": "2024-02-29", "at": "2024-02-29T13:14:15.123456Z", "tm": "13:00:00.000005",
		"id": "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c11", "bin": "AP8=", "next": {"n": 1}, "extra": 1}`
	got, err := dec.Value(ctx, "json_schema", "", registrytest.Frame(id, nil, []byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"b": true, "n": int64(7), "x": 1.5, "s": "s", "alt": map[string]any{"string": "a"}, "e": "RED",
		"arr": []any{int64(1), int64(2)}, "m": []records.MapEntry{{Key: "k", Value: "v"}}, "item": map[string]any{"sku": "A"},
		"day": records.Days(19782), "at": time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC), "tm": 13*time.Hour + 5*time.Microsecond,
		"id":   [16]byte{0x0b, 0x5c, 0x2a, 0x94, 0x4a, 0x8c, 0x4f, 0x43, 0x9d, 0x6b, 0x2f, 0x0f, 0x5e, 0x1b, 0x7c, 0x11},
		"bin":  []byte{0, 255},
		"next": map[string]any{"n": int64(1)},
	}
	if !reflect.DeepEqual(got.Value, want) {
		for k := range want {
			if !reflect.DeepEqual(got.Value[k], want[k]) {
				t.Errorf("%s: got %#v, want %#v", k, got.Value[k], want[k])
			}
		}
		t.FailNow()
	}
	if s := got.Shape.String(); !strings.HasPrefix(s, "struct<b: boolean, n: long, x: double, s: string, opt: string, alt: struct<integer: long, string: string>, e: string, arr: list<long>, m: map<string, string>, item: struct<sku: string>, day: date, at: timestamptz, tm: time, id: uuid, bin: binary, next: struct<") {
		t.Fatalf("shape %s", s)
	}
	_, err = dec.Value(ctx, "json_schema", "", registrytest.Frame(id, nil, []byte(`{"n": "seven"}`)))
	if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), "field n: schema says integer, value is a string") {
		t.Fatalf("type mismatch: %v", err)
	}
}

// Poison records are bad records; a registry that cannot answer is not.
func TestPoisonAndRegistryFailures(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	sc := `{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"s","type":"string"}]}`
	id := fake.Register("t-value", "AVRO", sc)
	good, _ := registrytest.Avro(sc, map[string]any{"a": int64(300), "s": "hello"})
	cases := []struct {
		name, data, want string
	}{
		{"wrong magic", string(append([]byte{1, 0, 0, 0, byte(id)}, good...)), "magic byte is 1"},
		{"short", "\x00\x00", "the header alone takes 5"},
		{"unknown id", string(registrytest.Frame(999, nil, good)), "unknown schema id 999"},
		{"truncated", string(registrytest.Frame(id, nil, good[:len(good)-2])), "truncated Avro payload"},
		{"trailing", string(registrytest.Frame(id, nil, append(good, 1))), "1 bytes left after the value"},
		{"format", string(registrytest.Frame(id, nil, good)), "is AVRO, the table's format is protobuf"},
	}
	for _, c := range cases {
		format := "avro"
		if c.name == "format" {
			format = "protobuf"
		}
		_, err := dec.Value(ctx, format, "", []byte(c.data))
		if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a bad record with %q", c.name, err, c.want)
		}
	}

	// A new id while the registry is down: transient, not a bad record.
	id2 := fake.Register("t-value", "AVRO", `{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}`)
	fake.SetDown(true)
	_, err := dec.Value(ctx, "avro", "", registrytest.Frame(id2, nil, []byte{2}))
	if err == nil || errors.Is(err, records.ErrBadRecord) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("registry down: %v", err)
	}
	// Cached ids keep decoding while it is down.
	if _, err := dec.Value(ctx, "avro", "", registrytest.Frame(id, nil, good)); err != nil {
		t.Fatalf("cached id while down: %v", err)
	}
	fake.SetDown(false)
	if v, err := dec.Value(ctx, "avro", "", registrytest.Frame(id2, nil, []byte{2})); err != nil || v.Value["a"] != int64(1) {
		t.Fatalf("after recovery: %v %v", v, err)
	}

	// Slow: a timeout is transient too.
	slow := NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL, Timeout: 50 * time.Millisecond}))
	fake.SetDelay(200 * time.Millisecond)
	_, err = slow.Value(ctx, "avro", "", registrytest.Frame(id, nil, good))
	fake.SetDelay(0)
	if err == nil || errors.Is(err, records.ErrBadRecord) {
		t.Fatalf("slow registry: %v", err)
	}
}

func TestAuthAndLatestAndKeys(t *testing.T) {
	ctx := context.Background()
	fake := registrytest.New()
	defer fake.Close()
	sc1 := `{"type":"record","name":"R","fields":[{"name":"a","type":"long"}]}`
	sc2 := `{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":["null","string"],"default":null}]}`
	fake.Register("t-value", "AVRO", sc1)
	fake.RequireAuth("Bearer tok")
	noAuth := NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL}))
	if _, err := noAuth.Value(ctx, "latest", "t-value", []byte{2}); err == nil || errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("missing auth: %v", err)
	}
	dec := NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL, BearerToken: "tok", RefreshInterval: time.Second}))
	v, err := dec.Value(ctx, "latest", "t-value", []byte{2})
	if err != nil || v.Value["a"] != int64(1) {
		t.Fatalf("latest: %v %v", v, err)
	}
	fake.Register("t-value", "AVRO", sc2)
	p, _ := registrytest.Avro(sc2, map[string]any{"a": int64(2), "b": "x"})
	// The new version is taken once the refresh interval (1 s) has passed.
	wait.Until(t, 10*time.Second, "the refreshed latest version", func() error {
		v, err = dec.Value(ctx, "latest", "t-value", p)
		if err != nil || v.Value["b"] != "x" {
			return fmt.Errorf("%v %v", v, err)
		}
		return nil
	})

	fake.RequireAuth("Basic " + "dTpw") // u:p
	basic := NewDecoder(NewRegistry(RegistryConfig{URL: fake.URL, Username: "u", Password: "p"}))
	kid := fake.Register("t-key", "AVRO", `"string"`)
	kp, _ := registrytest.Avro(`"string"`, "k1")
	k, ok, err := basic.Key(ctx, registrytest.Frame(kid, nil, kp))
	if err != nil || !ok || k.Value["value"] != "k1" {
		t.Fatalf("key: %v %v %v", k, ok, err)
	}
	if _, ok, err := basic.Key(ctx, []byte("plain-key")); ok || err != nil {
		t.Fatalf("plain key: %v %v", ok, err)
	}
}

// A recursive message is unrolled MaxRecursion levels; deeper data is a bad
// record naming the field; a truncated payload is a bad record too.
func TestProtobufRecursionAndTruncation(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	sc := "syntax = \"proto3\";\npackage r;\nmessage Node { int64 v = 1; Node next = 2; repeated Node kids = 3; }\n"
	id := fake.Register("n-value", "PROTOBUF", sc)
	md, err := registrytest.Proto(sc, "r.Node")
	if err != nil {
		t.Fatal(err)
	}
	nest := func(depth int) string {
		js := `{"v": "1"}`
		for range depth - 1 {
			js = `{"v": "1", "next": ` + js + `}`
		}
		return js
	}
	ok, _ := registrytest.ProtoFromJSON(md, nest(MaxRecursion))
	got, err := dec.Value(ctx, "protobuf", "", registrytest.Frame(id, []int{0}, ok))
	if err != nil {
		t.Fatalf("depth %d: %v", MaxRecursion, err)
	}
	if got.Value["next"].(map[string]any)["kids"] == nil {
		t.Fatalf("repeated message field missing: %v", got.Value)
	}
	deep, _ := registrytest.ProtoFromJSON(md, nest(MaxRecursion+1))
	_, err = dec.Value(ctx, "protobuf", "", registrytest.Frame(id, []int{0}, deep))
	if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), "field next.next.next.next: recursive type r.Node nests deeper than 4 levels") {
		t.Fatalf("too deep: %v", err)
	}
	_, err = dec.Value(ctx, "protobuf", "", registrytest.Frame(id, []int{0}, ok[:len(ok)-1]))
	if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), "invalid Protobuf") {
		t.Fatalf("truncated: %v", err)
	}
}

func TestJSONSchemaRecursionCut(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	id := fake.Register("j-value", "JSON", `{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}}}`)
	nest := func(depth int) string {
		js := `{"v": 1}`
		for range depth {
			js = `{"v": 1, "next": ` + js + `}`
		}
		return js
	}
	if _, err := dec.Value(ctx, "json_schema", "", registrytest.Frame(id, nil, []byte(nest(MaxRecursion-1)))); err != nil {
		t.Fatalf("within the limit: %v", err)
	}
	_, err := dec.Value(ctx, "json_schema", "", registrytest.Frame(id, nil, []byte(nest(MaxRecursion))))
	if !errors.Is(err, records.ErrBadRecord) || !strings.Contains(err.Error(), "recursive $ref # nests deeper than 4 levels") {
		t.Fatalf("too deep: %v", err)
	}
}
