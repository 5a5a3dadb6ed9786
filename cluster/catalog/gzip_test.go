package catalog

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/ledger"
)

// TestGzipMetadataFollowsTheGroup: a table asking for gzip metadata gets
// a gzip file, named as the spec says, only when every member reads gzip;
// with a member of an older build it gets plain JSON. Both parse back to
// the same table, and a table that does not ask stays plain.
func TestGzipMetadataFollowsTheGroup(t *testing.T) {
	ctx := context.Background()
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	gzProps := iceberg.Properties{table.MetadataCompressionKey: "gzip"}
	for _, tc := range []struct {
		name   string
		levels []int
		props  iceberg.Properties
		gz     bool
	}{
		{"every member reads gzip", []int{fsm.ProtocolGzipMetadata, fsm.ProtocolGzipMetadata}, gzProps, true},
		{"a member of an older build", []int{fsm.ProtocolGzipMetadata, fsm.ProtocolPartitionedUpsert}, gzProps, false},
		{"the table does not ask", []int{fsm.ProtocolGzipMetadata}, nil, false},
		{"it asks for zstd, which readers lack", []int{fsm.ProtocolGzipMetadata}, iceberg.Properties{table.MetadataCompressionKey: "zstd"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := fsm.NewState()
			st.Namespaces[ledger.TableKey([]string{"db"})] = &fsm.Namespace{Parts: []string{"db"}, Props: map[string]string{}}
			for i, lv := range tc.levels {
				id := string(rune('a' + i))
				st.Nodes[id] = &fsm.Member{ID: id, ProposalIDs: true, Protocol: lv}
			}
			r := &countingReplica{st: st}
			wh := t.TempDir()
			c := New(r, "file://"+wh, nil)
			// The counting replica records the proposal and applies
			// nothing, so the table does not load back: the file is what
			// is checked.
			_, _ = c.CreateTable(ctx, table.Identifier{"db", "t"}, sc, catalog.WithProperties(tc.props))
			if len(r.applied) != 1 {
				t.Fatalf("%d proposals", len(r.applied))
			}
			loc := r.applied[0].(fsm.CreateTable).MetadataLocation
			if got := strings.HasSuffix(loc, ".gz.metadata.json"); got != tc.gz {
				t.Fatalf("metadata file %s, want gzip %v", loc, tc.gz)
			}
			data, err := os.ReadFile(strings.TrimPrefix(loc, "file://"))
			if err != nil {
				t.Fatal(err)
			}
			if magic := len(data) > 1 && data[0] == 0x1f && data[1] == 0x8b; magic != tc.gz {
				t.Fatalf("gzip magic %v, want %v", magic, tc.gz)
			}
			meta, err := New(r, "file://"+wh, nil).metadataAt(ctx, loc) // a fresh cache: read from the file
			if err != nil {
				t.Fatal(err)
			}
			if meta.Location() != "file://"+filepath.Join(wh, "db", "t") || meta.CurrentSchema().NumFields() != 1 {
				t.Fatalf("read back location %s, %d fields", meta.Location(), meta.CurrentSchema().NumFields())
			}
		})
	}
}

// TestParseMetadataLimits: gzip is told by its magic bytes, whatever the
// name; a file that decompresses past MaxMetadataBytes is refused, named,
// before it is held whole; corrupt gzip is an error, not a panic.
func TestParseMetadataLimits(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	meta, err := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///w/t", iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	packed, err := gzipBytes(plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{plain, packed} {
		back, err := ParseMetadata(data)
		if err != nil || back.TableUUID() != meta.TableUUID() {
			t.Fatalf("round trip: %v", err)
		}
	}
	// A gzip bomb: 65 MiB of spaces in ~65 KB.
	var bomb bytes.Buffer
	w := gzip.NewWriter(&bomb)
	chunk := bytes.Repeat([]byte{' '}, 1<<20)
	for range MaxMetadataBytes>>20 + 1 {
		w.Write(chunk)
	}
	w.Close()
	if _, err := ParseMetadata(bomb.Bytes()); !errors.Is(err, ErrMetadataTooLarge) {
		t.Fatalf("a gzip bomb: %v, want ErrMetadataTooLarge", err)
	}
	if _, err := ParseMetadata(packed[:len(packed)/2]); err == nil {
		t.Fatal("truncated gzip parsed")
	}
}

// FuzzParseMetadata: any bytes, plain or gzip, parse or fail; none panic
// or read past the limit.
func FuzzParseMetadata(f *testing.F) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int64})
	meta, _ := table.NewMetadata(sc, iceberg.UnpartitionedSpec, table.UnsortedSortOrder, "file:///w/t", iceberg.Properties{})
	plain, _ := json.Marshal(meta)
	packed, _ := gzipBytes(plain)
	f.Add(plain)
	f.Add(packed)
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseMetadata(data)
	})
}
