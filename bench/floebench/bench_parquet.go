package floebench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/floe-io/floe/cmd/floe/node"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	icebergsink "github.com/floe-io/floe/sinks/iceberg"
	sinkapi "github.com/floe-io/floe/sinks/sink"
	"github.com/floe-io/floe/worker/ingest"
)

// parquetCell is one point of `floe bench --parquet-passes`: the table's
// write.parquet.* properties. Every cell starts from iceberg-go's defaults
// (Floe's own Parquet properties removed) except floe, which keeps the
// properties Floe sets when it creates a table.
type parquetCell struct {
	name  string
	props iceberg.Properties
	floe  bool
}

// propDictEnabled turns dictionary encoding off when not "true": the
// parquet-mr key iceberg-go honours (its table package does not export it).
const propDictEnabled = "parquet.enable.dictionary"

// parquetKeys are the properties a cell may set: removed before it sets its
// own, so that a cell measures iceberg-go's defaults plus its own change.
var parquetKeys = []string{
	table.ParquetCompressionKey, table.ParquetCompressionLevelKey, table.ParquetPageSizeBytesKey,
	table.ParquetRowGroupSizeBytesKey, table.ParquetRowGroupLimitKey, table.ParquetDictSizeBytesKey,
	propDictEnabled,
}

func parquetMatrix() []parquetCell {
	zstd := func(level string) iceberg.Properties {
		return iceberg.Properties{table.ParquetCompressionKey: "zstd", table.ParquetCompressionLevelKey: level}
	}
	return []parquetCell{
		{name: "iceberg-go default (zstd -1)", props: iceberg.Properties{}},
		{name: "zstd 1", props: zstd("1")},
		{name: "zstd 3", props: zstd("3")},
		{name: "zstd 6", props: zstd("6")},
		{name: "zstd 10", props: zstd("10")},
		{name: "snappy", props: iceberg.Properties{table.ParquetCompressionKey: "snappy"}},
		{name: "uncompressed", props: iceberg.Properties{table.ParquetCompressionKey: "uncompressed"}},
		{name: "dictionary off", props: iceberg.Properties{propDictEnabled: "false"}},
		{name: "page 64 KiB", props: iceberg.Properties{table.ParquetPageSizeBytesKey: "65536"}},
		{name: "page 8 KiB", props: iceberg.Properties{table.ParquetPageSizeBytesKey: "8192"}},
		{name: "row groups of 16,384 rows", props: iceberg.Properties{table.ParquetRowGroupLimitKey: "16384"}},
		{name: "floe (table created by Floe)", floe: true},
	}
}

// parquetFigures are one cell's measurements over one pass, summed.
type parquetFigures struct {
	writeCPU, writeWall, readCPU float64 // seconds
	bytes, mallocs, allocBytes   uint64
	files, rowGroups             int
}

// runParquetBench writes the bench records through the sink's Write (the
// path every append takes: Arrow batches, then iceberg-go's WriteRecords)
// under each cell's table properties, passes times, the cells alternating
// within a pass. Decoding is outside the timing: it does not depend on the
// Parquet settings. Each pass's files are read back whole (every column,
// through pqarrow) and removed.
func runParquetBench(ctx context.Context, out io.Writer, n, passes int) error {
	for _, set := range []struct {
		name string
		gen  func(int) string
	}{{"orders (the bench records)", benchRecord}, {"orders with a random note", noisyBenchRecord}} {
		fmt.Fprintf(out, "records: %s\n", set.name)
		if err := parquetMatrixRun(ctx, out, n, passes, set.gen); err != nil {
			return err
		}
	}
	return nil
}

// noisyBenchRecord is benchRecord(i) with its note (60 to 79 x's) replaced
// by as many random hex digits: free text, which the bench records lack
// (their other fields repeat with short periods, so they compress far
// better than real orders would).
func noisyBenchRecord(i int) string {
	note := strings.Repeat("x", 60+i%20)
	r := rand.New(rand.NewPCG(uint64(i), 18))
	hex := make([]byte, len(note))
	for k := range hex {
		hex[k] = "0123456789abcdef"[r.IntN(16)]
	}
	return strings.Replace(benchRecord(i), note, string(hex), 1)
}

// parquetMatrixRun is runParquetBench on the records gen makes. A first
// pass over every cell warms up (encoder pools, heap) and is not counted.
func parquetMatrixRun(ctx context.Context, out io.Writer, n, passes int, gen func(int) string) error {
	nd, sink, done, err := rawSinkNode(ctx, "floe-bench-parquet", "pq", node.WithNoSync())
	if err != nil {
		return err
	}
	defer done()
	cells := parquetMatrix()
	shape := &records.Shape{Kind: records.Struct}
	if _, err := ingest.DecodeJSON(shape, []byte(gen(0))); err != nil {
		return err
	}
	specs := make([]sinkapi.TableSpec, len(cells))
	for i, c := range cells {
		ident := []string{"bench", fmt.Sprintf("pq%d", i)}
		specs[i] = sinkapi.TableSpec{Key: ledger.TableKey(ident), Ident: ident, Format: "json"}
		if err := sink.Prepare(ctx, specs[i], shape); err != nil {
			return err
		}
		if err := setCellProps(ctx, nd, ident, c); err != nil {
			return fmt.Errorf("cell %s: %w", c.name, err)
		}
	}
	shape.MarkCommitted()
	load0 := loadAvg()
	fmt.Fprintf(out, "floe bench --parquet-passes %d: %d JSON records per cell and pass (%d bytes the first), GOMAXPROCS=%d, load %s\n\n",
		passes, n, len(gen(0)), runtime.GOMAXPROCS(0), load0)
	figs := make([][]parquetFigures, len(cells))
	for p := range passes + 1 {
		for i := range cells {
			f, err := parquetPass(ctx, sink, specs[i], shape, n, gen)
			if err != nil {
				return fmt.Errorf("cell %s: %w", cells[i].name, err)
			}
			if p > 0 {
				figs[i] = append(figs[i], f)
			}
		}
	}
	printParquetFigures(out, cells, figs, n)
	fmt.Fprintf(out, "\nload average before: %s; after: %s\n", load0, loadAvg())
	return nil
}

// setCellProps gives the table ident c's properties.
func setCellProps(ctx context.Context, nd *node.Node, ident []string, c parquetCell) error {
	if c.floe {
		return nil
	}
	tbl, err := nd.Catalog().LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	var drop []string
	for _, k := range parquetKeys {
		if _, set := c.props[k]; !set {
			drop = append(drop, k)
		}
	}
	tx := tbl.NewTransaction()
	if err := tx.RemoveProperties(drop); err != nil {
		return err
	}
	if err := tx.SetProperties(c.props); err != nil {
		return err
	}
	_, err = tx.Commit(ctx)
	return err
}

// parquetPass writes n bench records to spec in batches of 100,000 (one
// data file each at the bench's 128 MiB target), reads the files back and
// removes them.
func parquetPass(ctx context.Context, sink *icebergsink.Sink, spec sinkapi.TableSpec, shape *records.Shape, n int, gen func(int) string) (parquetFigures, error) {
	const batch = 100_000
	var f parquetFigures
	var paths []string
	ts := time.Now()
	for i := 0; i < n; i += batch {
		recs := make([]*records.Record, 0, batch)
		for j := i; j < min(i+batch, n); j++ {
			v := []byte(gen(j))
			m, err := ingest.DecodeJSON(shape, v)
			if err != nil {
				return f, err
			}
			recs = append(recs, &records.Record{Topic: "pq", Partition: int32(j % 8), Offset: int64(j), Timestamp: ts, Key: v[:12], Value: m})
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		cpu0, wall0 := selfCPU(), time.Now()
		files, err := sink.Write(ctx, spec, uuid.NewString(), recs)
		f.writeCPU += selfCPU() - cpu0
		f.writeWall += time.Since(wall0).Seconds()
		runtime.ReadMemStats(&m1)
		if err != nil {
			return f, err
		}
		f.mallocs += m1.Mallocs - m0.Mallocs
		f.allocBytes += m1.TotalAlloc - m0.TotalAlloc
		for _, d := range files {
			f.bytes += uint64(d.SizeBytes)
			paths = append(paths, strings.TrimPrefix(d.Path, "file://"))
		}
	}
	for _, p := range paths {
		groups, cpu, err := readParquetFile(ctx, p)
		if err != nil {
			return f, fmt.Errorf("reading %s: %w", p, err)
		}
		f.files++
		f.rowGroups += groups
		f.readCPU += cpu
		if err := os.Remove(p); err != nil {
			return f, err
		}
	}
	return f, nil
}

// readParquetFile reads every column of a local Parquet file into Arrow:
// its row groups and the CPU seconds the read took.
func readParquetFile(ctx context.Context, path string) (int, float64, error) {
	cpu0 := selfCPU()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return 0, 0, err
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return 0, 0, err
	}
	tb, err := fr.ReadTable(ctx)
	if err != nil {
		return 0, 0, err
	}
	tb.Release()
	return rdr.NumRowGroups(), selfCPU() - cpu0, nil
}

// printParquetFigures prints per cell the median over passes of each
// figure per record, and the range of the write CPU.
func printParquetFigures(out io.Writer, cells []parquetCell, figs [][]parquetFigures, n int) {
	per := func(fs []parquetFigures, get func(parquetFigures) float64) (med, lo, hi float64) {
		v := make([]float64, len(fs))
		for i, f := range fs {
			v[i] = get(f) / float64(n)
		}
		slices.Sort(v)
		return v[len(v)/2], v[0], v[len(v)-1]
	}
	fmt.Fprintf(out, "%-30s %16s %12s %11s %9s %10s %11s %15s %6s\n", "cell", "write CPU ns/rec", "(min-max)",
		"wall ns/rec", "bytes/rec", "allocs/rec", "alloc B/rec", "read CPU ns/rec", "groups")
	for i, c := range cells {
		fs := figs[i]
		cpu, lo, hi := per(fs, func(f parquetFigures) float64 { return f.writeCPU * 1e9 })
		wall, _, _ := per(fs, func(f parquetFigures) float64 { return f.writeWall * 1e9 })
		b, _, _ := per(fs, func(f parquetFigures) float64 { return float64(f.bytes) })
		al, _, _ := per(fs, func(f parquetFigures) float64 { return float64(f.mallocs) })
		ab, _, _ := per(fs, func(f parquetFigures) float64 { return float64(f.allocBytes) })
		rd, _, _ := per(fs, func(f parquetFigures) float64 { return f.readCPU * 1e9 })
		groups := float64(fs[0].rowGroups) / float64(max(fs[0].files, 1))
		fmt.Fprintf(out, "%-30s %16.0f %12s %11.0f %9.1f %10.1f %11.0f %15.0f %6.1f\n", c.name, cpu,
			fmt.Sprintf("%.0f-%.0f", lo, hi), wall, b, al, ab, rd, groups)
	}
}
