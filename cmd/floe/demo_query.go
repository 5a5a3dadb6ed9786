package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// The Python packages the printed commands install. DuckDB's iceberg
// extension normally comes from extensions.duckdb.org, which a machine that
// reaches only package registries cannot download from; the duckdb-ext-*
// wheels on PyPI carry the same extensions. The pins are the interop
// suite's (test/interop/requirements.txt; TestDemoPinsMatchInterop).
const (
	demoDuckDB    = "duckdb==1.4.4"
	demoDuckDBExt = "1.4.4.20260205"
)

// demoOrdersSQL is the query the demo runs with iceberg-go and prints for
// DuckDB, so the two answers can be compared line by line.
const demoOrdersSQL = "SELECT shipping.country AS country, count(*) AS orders, round(sum(amount), 2) AS amount, count(coupon) AS with_coupon FROM %s GROUP BY 1 ORDER BY 1"

// demoVenv is where the printed commands make a Python environment: outside
// the demo directory, which every run empties, so the packages are
// installed once.
func demoVenv() string { return filepath.Join(os.TempDir(), "floe-demo-venv") }

// demoVenvPython is that environment's interpreter.
func demoVenvPython() string { return filepath.Join(demoVenv(), "bin", "python") }

// writeQueryCommands prints how to query the table from Python, with only
// PyPI reachable.
func writeQueryCommands(out io.Writer, tbl *table.Table) {
	venv, py := demoVenv(), demoVenvPython()
	meta := strings.TrimPrefix(tbl.MetadataLocation(), "file://")
	fmt.Fprintf(out, "Query it yourself; every package comes from PyPI (DuckDB's extensions as the duckdb-ext-* wheels):\n")
	fmt.Fprintf(out, "  python3 -m venv %s\n", venv)
	fmt.Fprintf(out, "  %s -m pip install 'pyiceberg[pyarrow]' %s duckdb-ext-iceberg==%s duckdb-ext-avro==%s\n", py, demoDuckDB, demoDuckDBExt, demoDuckDBExt)
	fmt.Fprintf(out, "PyIceberg:\n")
	fmt.Fprintf(out, "  %s -c \"from pyiceberg.table import StaticTable; t = StaticTable.from_metadata('%s'); print(t.scan().to_arrow().num_rows)\"\n", py, tbl.MetadataLocation())
	fmt.Fprintf(out, "DuckDB (the iceberg extension LOADed from the wheel, nothing downloaded):\n")
	fmt.Fprintf(out, "  %s -c \"import duckdb, duckdb_ext; con = duckdb.connect(config={'extension_directory': list(duckdb_ext.__path__)[0] + '/extensions', 'autoinstall_known_extensions': False}); con.sql('LOAD iceberg'); con.sql('%s', params=['%s']).show()\"\n",
		py, fmt.Sprintf(demoOrdersSQL, "iceberg_scan(?)"), meta)
	if root, ok := deltaRoot(tbl); ok {
		fmt.Fprintf(out, "It is a Delta table too (--formats), over the same files; read it with delta-rs (pip install deltalake):\n")
		fmt.Fprintf(out, "  %s -m pip install deltalake && %s -c \"from deltalake import DeltaTable; t = DeltaTable('%s'); print(t.version(), t.to_pyarrow_table().num_rows)\"\n", py, py, root)
	}
	fmt.Fprintln(out)
}

// countryOrders is one line of the demo's query.
type countryOrders struct {
	orders, withCoupon int64
	amount             float64
}

// writeOrdersQuery runs demoOrdersSQL on the table with iceberg-go's
// scanner (no SQL engine in Go: the grouping is done here) and prints the
// answer: the last thing the demo prints is the data.
func writeOrdersQuery(ctx context.Context, out io.Writer, tbl *table.Table) error {
	groups, err := ordersByCountry(ctx, tbl)
	if err != nil {
		return err
	}
	countries := make([]string, 0, len(groups))
	for c := range groups {
		countries = append(countries, c)
	}
	sort.Strings(countries)
	fmt.Fprintf(out, "demo.orders queried with iceberg-go (the DuckDB command above prints the same):\n")
	fmt.Fprintf(out, "  "+demoOrdersSQL+"\n\n", "demo.orders")
	fmt.Fprintf(out, "  %-8s %8s %14s %12s\n", "country", "orders", "amount", "with_coupon")
	var total countryOrders
	for _, c := range countries {
		g := groups[c]
		fmt.Fprintf(out, "  %-8s %8d %14.2f %12d\n", c, g.orders, g.amount, g.withCoupon)
		total.orders += g.orders
		total.amount += g.amount
		total.withCoupon += g.withCoupon
	}
	fmt.Fprintf(out, "  %-8s %8d %14.2f %12d\n", "(all)", total.orders, total.amount, total.withCoupon)
	return nil
}

// ordersByCountry scans shipping, amount and coupon and groups them.
func ordersByCountry(ctx context.Context, tbl *table.Table) (map[string]*countryOrders, error) {
	groups := map[string]*countryOrders{}
	if tbl.CurrentSnapshot() == nil {
		return groups, nil
	}
	// coupon appears halfway through the demo: a table scanned before then
	// has no such column.
	fields := []string{"shipping", "amount"}
	if _, ok := tbl.Schema().FindFieldByName("coupon"); ok {
		fields = append(fields, "coupon")
	}
	_, batches, err := tbl.Scan(table.WithSelectedFields(fields...)).ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("querying demo.orders: %w", err)
	}
	for b, err := range batches {
		if err != nil {
			return nil, fmt.Errorf("querying demo.orders: %w", err)
		}
		err := groupBatch(b, groups)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	return groups, nil
}

// groupBatch adds one record batch to the groups.
func groupBatch(b arrow.RecordBatch, groups map[string]*countryOrders) error {
	col := func(name string) arrow.Array {
		if ids := b.Schema().FieldIndices(name); len(ids) > 0 {
			return b.Column(ids[0])
		}
		return nil
	}
	shipping, ok := col("shipping").(*array.Struct)
	if !ok {
		return fmt.Errorf("querying demo.orders: shipping is %v, not a struct", col("shipping"))
	}
	idx, ok := shipping.DataType().(*arrow.StructType).FieldIdx("country")
	if !ok {
		return fmt.Errorf("querying demo.orders: no shipping.country")
	}
	country, ok := shipping.Field(idx).(interface{ Value(int) string })
	if !ok {
		return fmt.Errorf("querying demo.orders: shipping.country is %s, not a string", shipping.Field(idx).DataType())
	}
	amount, coupon := col("amount"), col("coupon")
	for i := range int(b.NumRows()) {
		key := "NULL"
		if shipping.IsValid(i) && shipping.Field(idx).IsValid(i) {
			key = country.Value(i)
		}
		g := groups[key]
		if g == nil {
			g = &countryOrders{}
			groups[key] = g
		}
		g.orders++
		g.amount += float(amount, i)
		if coupon != nil && coupon.IsValid(i) {
			g.withCoupon++
		}
	}
	return nil
}

// float is a numeric column's value at i as a float64 (0 when null): JSON
// inference makes amount a double, but a decimal or integer adds up too.
func float(a arrow.Array, i int) float64 {
	if a == nil || a.IsNull(i) {
		return 0
	}
	switch a := a.(type) {
	case *array.Float64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Decimal128:
		return a.Value(i).ToFloat64(a.DataType().(*arrow.Decimal128Type).Scale)
	}
	return 0
}
