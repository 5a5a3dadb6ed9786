package ingest

import (
	"context"
	"testing"

	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// cachingDecoder decodes values whose first byte is 'c' (compiled) without
// the registry, and keys whose first byte is 'k' or 'p' (a plain key).
type cachingDecoder struct{}

func (cachingDecoder) Value(_ context.Context, _, _ string, data []byte) (records.Decoded, error) {
	return records.Decoded{Value: map[string]any{"v": string(data)}, SchemaID: 1}, nil
}

func (cachingDecoder) Key(context.Context, []byte) (records.Decoded, bool, error) {
	return records.Decoded{}, false, nil
}

func (cachingDecoder) ValueCached(_ string, data []byte) (records.Decoded, bool) {
	if data[0] != 'c' {
		return records.Decoded{}, false
	}
	return records.Decoded{Value: map[string]any{"v": "pre:" + string(data)}, SchemaID: 1}, true
}

func (cachingDecoder) KeyCached(data []byte) (records.Decoded, bool, bool) {
	return records.Decoded{}, false, data[0] == 'k' || data[0] == 'p'
}

func TestPredecodeSchema(t *testing.T) {
	for _, c := range []struct {
		name, format string
		value, key   string
		pre          bool
	}{
		{"compiled avro", "avro", "c1", "", true},
		{"compiled protobuf, plain key", "protobuf", "c1", "p", true},
		{"schema not compiled", "avro", "x1", "", false},
		{"key schema not compiled", "avro", "c1", "n", false},
		{"latest looks its subject up", "latest", "c1", "", false},
		{"json is checked, not decoded", "json", "c1", "", false},
		{"raw", "raw", "c1", "", false},
		{"tombstone", "avro", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &Pipeline{n: &Node{Schemas: cachingDecoder{}}, spec: sink.TableSpec{Format: c.format}}
			pre := p.predecodeSchema([]byte(c.value), []byte(c.key))
			if (pre != nil) != c.pre {
				t.Fatalf("predecoded %v, want %v", pre != nil, c.pre)
			}
			if pre != nil && pre.value.Value["v"] != "pre:"+c.value {
				t.Fatalf("value %v", pre.value.Value)
			}
		})
	}
	// Without a decoder that can decode offline, nothing is predecoded.
	p := &Pipeline{n: &Node{}, spec: sink.TableSpec{Format: "avro"}}
	if p.predecodeSchema([]byte("c1"), nil) != nil {
		t.Fatal("predecoded without a decoder")
	}
}
