package fsm_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
)

// zeroFields lists, by path, what under v leaves part of the format unseen
// in its encoding: a nil pointer, an empty map or slice (their elements'
// encoding never shows), or a zero scalar that its tag omits. A zero scalar
// that is encoded anyway (no omitempty, or a map value) shows its key and
// type, and may stay zero. The golden values must leave nothing unseen: a
// field nobody populates could change its encoding unnoticed.
func zeroFields(path string, v reflect.Value, omitted bool) []string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return []string{path}
		}
		return zeroFields(path, v.Elem(), false)
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				omit := strings.Contains(f.Tag.Get("json"), ",omitempty")
				out = append(out, zeroFields(path+"."+f.Name, v.Field(i), omit)...)
			}
		}
		return out
	case reflect.Slice, reflect.Map:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			// Bytes show as a string (or a null) whatever they hold.
			if omitted && v.Len() == 0 {
				return []string{path}
			}
			return nil
		}
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		if v.Kind() == reflect.Slice {
			for i := range v.Len() {
				out = append(out, zeroFields(path+"[]", v.Index(i), false)...)
			}
			return out
		}
		for it := v.MapRange(); it.Next(); {
			out = append(out, zeroFields(path+"[]", it.Value(), false)...)
		}
		return out
	}
	if omitted && v.IsZero() {
		return []string{path}
	}
	return nil
}

func TestGoldenValuesFullyPopulated(t *testing.T) {
	values := map[string]any{"State": goldenState(t)}
	for _, c := range goldenCommands(t) {
		values[c.Type().String()] = c
	}
	for name, v := range values {
		if zero := zeroFields(name, reflect.ValueOf(v), false); len(zero) > 0 {
			t.Errorf("golden value leaves fields empty: %v", zero)
		}
	}
}

// TestTableSpecConversion: every field of config.Table survives the trip
// through the replicated form (a field added to config without a frozen key
// here fails, since goldenConfigTable populates every field).
func TestTableSpecConversion(t *testing.T) {
	in := goldenConfigTable()
	for _, v := range []reflect.Value{reflect.ValueOf(in), reflect.ValueOf(in.Compaction)} {
		for i := range v.NumField() {
			if v.Field(i).IsZero() {
				t.Errorf("goldenConfigTable leaves %s.%s empty: populate it", v.Type(), v.Type().Field(i).Name)
			}
		}
	}
	spec := fsm.SpecOf(in)
	if out := spec.Config(); !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n%#v\nwant\n%#v", out, in)
	}
	if zero := zeroFields("TableSpec", reflect.ValueOf(spec), false); len(zero) > 0 {
		t.Fatalf("replicated form drops: %v", zero)
	}
}

// TestGoldenMainRelease is the rolling-upgrade proof: the files in
// testdata/golden/main are the bytes the release before the wire format
// (Go-field-name keys for mappings, partition values as JSON numbers)
// wrote, generated from it and never regenerated. They must still decode to
// the values they were made from.
func TestGoldenMainRelease(t *testing.T) {
	for _, c := range mainReleaseCommands(t) {
		t.Run(c.Type().String(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "golden", "main", goldenName(c)))
			if err != nil {
				t.Fatal(err)
			}
			if v := decodeCommand(t, data, c); !reflect.DeepEqual(v, c) {
				t.Fatalf("main's entry decodes to\n%#v\nwant\n%#v", v, c)
			}
			// The other direction: this version encodes the same value to
			// the same bytes, so the only change an older node meets is the
			// added partition_values key, which encoding/json skips. Framed
			// for a group at main's protocol level: no ignorable bit.
			if again, err := fsm.EncodeFor(fsm.ProtocolProposalIDs, "", c); err != nil || !bytes.Equal(again, data) {
				t.Fatalf("this version encodes main's value as\n%s\nmain wrote\n%s (%v)", again, data, err)
			}
		})
	}
	t.Run("snapshot", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join("testdata", "golden", "main", "snapshot.json"))
		if err != nil {
			t.Fatal(err)
		}
		f := fsm.New()
		if err := f.Restore(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		want := mainReleaseState(t)
		if again, err := fsm.EncodeSnapshot(want); err != nil || !bytes.Equal(again, data) {
			t.Fatalf("this version encodes main's state differently (%v)", err)
		}
		f.Read(func(s *fsm.State) {
			if !reflect.DeepEqual(s, want) {
				t.Fatalf("main's snapshot decodes to\n%#v\nwant\n%#v", s, want)
			}
		})
	})
}

// untypedFields are the fields allowed to hold values whose encoding
// depends on their Go type, and why.
var untypedFields = map[string]bool{
	// The partition values as JSON, still written for nodes of the release
	// before; read only for entries that lack PartValues (their exact form).
	"ledger.FileDescriptor.Partition": true,
}

// TestReplicatedTypesTagged walks every type reachable from the commands
// and the state and requires an explicit JSON key on every field: without
// one, encoding/json uses the Go name, and a rename would change the
// replicated format. Embedded structs are walked (their fields are
// promoted); map keys must be strings or integers, which encode as
// themselves; types with their own MarshalJSON own their format.
func TestReplicatedTypesTagged(t *testing.T) {
	marshaler := reflect.TypeFor[json.Marshaler]()
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if typ.Implements(marshaler) || reflect.PointerTo(typ).Implements(marshaler) {
			return
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(path, typ.Elem())
		case reflect.Map:
			switch typ.Key().Kind() {
			case reflect.String, reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint32, reflect.Uint64:
			default:
				t.Errorf("%s: map key %s has no stable encoding", path, typ.Key())
			}
			walk(path+"[]", typ.Elem())
		case reflect.Interface:
			t.Errorf("%s: an interface's encoding depends on the dynamic Go type", path)
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				switch {
				case !f.IsExported():
				case f.Anonymous && f.Tag.Get("json") == "":
					walk(path+"."+f.Name, f.Type)
				case strings.Split(f.Tag.Get("json"), ",")[0] == "":
					t.Errorf("%s.%s (%s) has no JSON key: add a tag", path, f.Name, typ)
				case untypedFields[typ.String()+"."+f.Name]:
				default:
					walk(path+"."+f.Name, f.Type)
				}
			}
		}
	}
	walk("State", reflect.TypeFor[fsm.State]())
	for _, c := range goldenCommands(t) {
		walk(c.Type().String(), reflect.TypeOf(c))
	}
}
