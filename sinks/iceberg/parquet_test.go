package iceberg

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/sinks/sink"
)

// footer is what a test reads of a data file's Parquet footer and pages.
type footer struct {
	codecs      map[compress.Compression]bool // of every column chunk
	rowGroups   int
	offsetPages int // data pages of the _kafka_offset column, over all row groups
}

func readFooter(t *testing.T, path string) footer {
	t.Helper()
	rdr, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	col := rdr.MetaData().Schema.ColumnIndexByName(ColOffset)
	if col < 0 {
		t.Fatalf("no %s column in %s", ColOffset, path)
	}
	f := footer{codecs: map[compress.Compression]bool{}, rowGroups: rdr.NumRowGroups()}
	for g := range rdr.NumRowGroups() {
		rg := rdr.RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.MetaData().ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			f.codecs[cc.Compression()] = true
		}
		pr, err := rg.GetColumnPageReader(col)
		if err != nil {
			t.Fatal(err)
		}
		for pr.Next() {
			if _, ok := pr.Page().(file.DataPage); ok {
				f.offsetPages++
			}
		}
		if err := pr.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// rawRecords are n raw-table records of 512 distinct bytes each.
func rawRecords(n int) []*records.Record {
	recs := make([]*records.Record, n)
	for i := range recs {
		v := []byte(fmt.Sprintf("%08d", i) + strings.Repeat(fmt.Sprintf("%x", i*7919), 512))[:512]
		recs[i] = &records.Record{Topic: "t", Offset: int64(i), Raw: v}
	}
	return recs
}

// writeRaw writes recs to the raw table named name, creating it, after
// edit (when not nil) changed its properties; it returns the one data file.
func writeRaw(t *testing.T, s *Sink, cat *catalog.Catalog, name string, recs []*records.Record, edit func(*table.Transaction) error) ledger.FileDescriptor {
	t.Helper()
	ctx := context.Background()
	spec := sink.TableSpec{Key: ledger.TableKey([]string{"db", name}), Ident: []string{"db", name}, Format: "raw"}
	if err := s.Prepare(ctx, spec, nil); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		tbl, err := cat.LoadTable(ctx, spec.Ident)
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := edit(tx); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	files, err := s.Write(ctx, spec, "0b5c2a94-4a8c-4f43-9d6b-2f0f5e1b7c31", recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%s: %d data files, want 1", name, len(files))
	}
	return files[0]
}

// A table Floe creates writes zstd at level 1, in one row group with pages
// of iceberg-go's 1 MiB (docs/benchmarks.md, "Parquet settings"); a
// property an operator sets on the table wins at the next write.
func TestParquetSettingsOfNewTables(t *testing.T) {
	s, cat, _ := newSink(t)
	recs := rawRecords(40_000) // about 20 MB of values
	got := writeRaw(t, s, cat, "floe", recs, nil)
	f := readFooter(t, got.Path)
	if len(f.codecs) != 1 || !f.codecs[compress.Codecs.Zstd] {
		t.Fatalf("column chunk codecs %v, want zstd only", f.codecs)
	}
	// 40,000 rows are one row group (1,048,576 rows at most). The writer
	// cuts a page when it holds 1 MiB, checked every 20,000 rows
	// (write.parquet.page-row-limit): 40,000 offsets (320 kB) are one page,
	// and would be two if pages were smaller than 160 kB.
	if f.rowGroups != 1 || f.offsetPages != 1 {
		t.Fatalf("%d row groups, %d pages of %s: want 1 row group, 1 page", f.rowGroups, f.offsetPages, ColOffset)
	}

	// The footer does not record the level: the same records written at
	// level 1 must come out the same size, and at the default level not.
	level := func(l string) func(*table.Transaction) error {
		return func(tx *table.Transaction) error {
			if l == "" {
				return tx.RemoveProperties([]string{table.ParquetCompressionLevelKey})
			}
			return tx.SetProperties(iceberg.Properties{table.ParquetCompressionLevelKey: l})
		}
	}
	one := writeRaw(t, s, cat, "level1", recs, level("1"))
	def := writeRaw(t, s, cat, "leveldefault", recs, level(""))
	if one.SizeBytes == def.SizeBytes {
		t.Fatalf("levels 1 and default both write %d bytes: the records cannot tell the level", one.SizeBytes)
	}
	if got.SizeBytes != one.SizeBytes {
		t.Fatalf("Floe's table wrote %d bytes, zstd level 1 %d, the default level %d", got.SizeBytes, one.SizeBytes, def.SizeBytes)
	}

	snappy := writeRaw(t, s, cat, "operator", recs, func(tx *table.Transaction) error {
		return tx.SetProperties(iceberg.Properties{table.ParquetCompressionKey: "snappy", table.ParquetPageSizeBytesKey: "8192"})
	})
	if f := readFooter(t, snappy.Path); len(f.codecs) != 1 || !f.codecs[compress.Codecs.Snappy] || f.offsetPages != 2 {
		t.Fatalf("after the operator set snappy and 8 KiB pages: codecs %v, %d pages of %s", f.codecs, f.offsetPages, ColOffset)
	}
}
