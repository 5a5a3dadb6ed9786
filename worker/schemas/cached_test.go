package schemas

import (
	"context"
	"reflect"
	"testing"

	"github.com/floe-io/floe/worker/schemas/registrytest"
)

// TestDecodeCached: ValueCached and KeyCached decode nothing until the
// schema is compiled (they never call the registry), then decode as Value
// and Key do; a bad record, the latest format and a format mismatch are
// left to Value. The registry is down once the schema is compiled.
func TestDecodeCached(t *testing.T) {
	ctx := context.Background()
	dec, fake := newDecoder(t)
	const sc = `{"type":"record","name":"K","fields":[{"name":"id","type":"long"},{"name":"s","type":"string"}]}`
	id := fake.Register("orders-value", "AVRO", sc)
	payload, err := registrytest.Avro(sc, map[string]any{"id": int64(7), "s": "x"})
	if err != nil {
		t.Fatal(err)
	}
	framed := registrytest.Frame(id, nil, payload)
	if _, ok := dec.ValueCached("avro", framed); ok {
		t.Fatal("decoded before the schema was compiled")
	}
	if _, _, ok := dec.KeyCached(framed); ok {
		t.Fatal("key decoded before its schema was compiled")
	}
	want, err := dec.Value(ctx, "avro", "", framed) // compiles id
	if err != nil {
		t.Fatal(err)
	}
	fake.SetDown(true) // from here on, a registry call would fail
	got, ok := dec.ValueCached("avro", framed)
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("ValueCached = %+v, %v; want %+v", got, ok, want)
	}
	k, keyOK, ok := dec.KeyCached(framed)
	wk, wkOK, err := dec.Key(ctx, framed)
	if !ok || err != nil || keyOK != wkOK || !reflect.DeepEqual(k, wk) {
		t.Fatalf("KeyCached = %+v %v %v; Key = %+v %v %v", k, keyOK, ok, wk, wkOK, err)
	}
	for _, c := range []struct {
		name, format string
		data         []byte
	}{
		{"latest", "latest", framed},
		{"format mismatch", "protobuf", framed},
		{"truncated", "avro", framed[:len(framed)-1]},
		{"no header", "avro", []byte{1, 2}},
	} {
		if _, ok := dec.ValueCached(c.format, c.data); ok {
			t.Errorf("%s: decoded, want it left to Value", c.name)
		}
	}
	for _, key := range [][]byte{[]byte("order-1"), framed[:len(framed)-1]} {
		if _, keyOK, ok := dec.KeyCached(key); !ok || keyOK {
			t.Errorf("key %q: keyOK %v ok %v, want a plain key (false, true)", key, keyOK, ok)
		}
	}
}
