package fsm_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
)

// update rewrites testdata/golden from the current encoding:
// go test ./cluster/fsm/ -run TestGolden -update. Never the main/ files:
// they are the bytes the previous release wrote, kept to prove it is read.
var update = flag.Bool("update", false, "rewrite testdata/golden from the current encoding")

func goldenName(c fsm.Command) string {
	return fmt.Sprintf("%02d-%s.cmd", uint8(c.Type()), c.Type())
}

// checkGolden compares data with the golden file, or writes it with -update.
func checkGolden(t *testing.T, path string, data []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to write it): %v", err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("%s: the encoding changed (a format change must be deliberate: -update, and say why)\n got: %q\nwant: %q", path, data, want)
	}
}

// decodeCommand decodes a framed entry into a new value of want's type.
func decodeCommand(t *testing.T, data []byte, want fsm.Command) any {
	t.Helper()
	// The ignorable bit is framing, not the type (version.go).
	if len(data) == 0 || fsm.CommandType(data[0])&^fsm.IgnorableFlag != want.Type() {
		t.Fatalf("entry %q: type byte is not %d", data, want.Type())
	}
	ptr := reflect.New(reflect.TypeOf(want))
	if err := json.Unmarshal(data[1:], ptr.Interface()); err != nil {
		t.Fatalf("decoding %s: %v", want.Type(), err)
	}
	return ptr.Elem().Interface()
}

func TestGoldenCommands(t *testing.T) {
	seen := map[fsm.CommandType]bool{}
	for _, c := range goldenCommands(t) {
		t.Run(c.Type().String(), func(t *testing.T) {
			seen[c.Type()] = true
			data, err := fsm.Encode(c)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", goldenName(c))
			checkGolden(t, path, data)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if v := decodeCommand(t, got, c); !reflect.DeepEqual(v, c) {
				t.Fatalf("golden file decodes to\n%#v\nwant\n%#v", v, c)
			}
		})
	}
	for typ := fsm.CommandType(1); typ < fsm.IgnorableFlag; typ++ {
		if fsm.Known(typ) && !seen[typ] {
			t.Errorf("command %s has no golden value: add one to goldenCommands", typ)
		}
	}
}

func TestGoldenSnapshot(t *testing.T) {
	want := goldenState(t)
	data, err := fsm.EncodeSnapshot(want)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", "snapshot.json")
	checkGolden(t, path, data)
	f := fsm.New()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Restore(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	f.Read(func(s *fsm.State) {
		if !reflect.DeepEqual(s, want) {
			t.Fatalf("golden snapshot decodes to\n%#v\nwant\n%#v", s, want)
		}
	})
}
