package schemas

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
)

// TestProtobufMalformedMapEntryIsPoison pins an input found by
// FuzzProtobufValue: a google.protobuf.Struct whose map entry gives its key
// twice, the second time as a varint. protobuf-go's reflective decoder
// panics on it; Floe must refuse the record with an error instead.
func TestProtobufMalformedMapEntryIsPoison(t *testing.T) {
	md := (&structpb.Struct{}).ProtoReflect().Descriptor()
	plan := planMsg(md, nil)
	cases := []struct {
		name string
		body []byte
		err  string // "" means it decodes
	}{
		{"well formed", []byte{0x0a, 0x07, 0x0a, 0x01, 'a', 0x12, 0x02, 0x20, 0x01}, ""},
		{"key twice, second a varint", []byte{0x0a, 0x05, 0x0a, 0x01, 'a', 0x08, 0x01}, "malformed google.protobuf.Struct"},
		{"truncated entry", []byte{0x0a, 0x05, 0x0a, 0x01}, "invalid Protobuf payload"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := decodeProto(plan, c.body)
			if c.err == "" {
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %v, %v; want an error containing %q", v, err, c.err)
			}
		})
	}
}
