package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/testing/wait"
)

// record is the benchmark's record shape (cmd/floe's benchRecord).
func record(i int) string {
	return fmt.Sprintf(`{"order_id":%d,"customer_id":"cust-%08d","status":"paid","amount":%d.25,"currency":"EUR",`+
		`"items":[{"sku":"sku-%06d","qty":%d,"price":1.99},{"sku":"sku-x","qty":1,"price":2.49}],`+
		`"shipping":{"name":"Customer %d","street":"1 Long Street Name","city":"Berlin","zip":"10115","country":"DE","express":%t},`+
		`"created_at":"2026-11-29T12:00:00.000Z","note":"%s"}`, i, i, i, i, 1+i%5, i, i%2 == 0, strings.Repeat("x", 60))
}

// TestWriteLandsEveryRow feeds decoded records to the writer and reads the
// table back: every row once, with its order id, items and shipping intact.
func TestWriteLandsEveryRow(t *testing.T) {
	cases := []struct {
		name string
		rows int
	}{
		{"one commit's worth", 10},
		{"several intervals", 2500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wh := "file://" + filepath.Join(t.TempDir(), "wh")
			if _, err := openTable(ctx, wh, "bench.t"); err != nil {
				t.Fatal(err)
			}
			tbl, err := openTable(ctx, wh, "bench.t") // a second start loads it
			if err != nil {
				t.Fatal(err)
			}
			rows := make(chan row)
			errc := make(chan error, 1)
			go func() { errc <- write(ctx, tbl, rows, 20*time.Millisecond) }()
			for i := range c.rows {
				var o order
				if err := json.Unmarshal([]byte(record(i)), &o); err != nil {
					t.Fatal(err)
				}
				rows <- row{o: o, partition: int32(i % 3), offset: int64(i / 3)}
			}
			var got *table.Table
			wait.Until(t, 30*time.Second, "every row committed", func() error {
				cat, err := hadoop.NewCatalog("check", wh, nil)
				if err != nil {
					return err
				}
				if got, err = cat.LoadTable(ctx, table.Identifier{"bench", "t"}); err != nil {
					return err
				}
				if s := got.CurrentSnapshot(); s == nil || s.Summary.Properties["total-records"] != fmt.Sprint(c.rows) {
					return fmt.Errorf("snapshot %+v", s)
				}
				return nil
			})
			cancel()
			<-errc
			checkRows(t, got, c.rows)
		})
	}
}

func checkRows(t *testing.T, tbl *table.Table, n int) {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	tr := array.NewTableReader(at, 0)
	defer tr.Release()
	seen := map[int64]bool{}
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(0).(*array.Int64)
		items := rec.Column(5).(*array.List)
		ship := rec.Column(6).(*array.Struct)
		for i := range int(rec.NumRows()) {
			id := ids.Value(i)
			if seen[id] {
				t.Errorf("order %d twice", id)
			}
			seen[id] = true
			if s, e := items.ValueOffsets(i); e-s != 2 {
				t.Errorf("order %d has %d items, want 2", id, e-s)
			}
			if name := ship.Field(0).(*array.String).Value(i); name != fmt.Sprintf("Customer %d", id) {
				t.Errorf("order %d shipped to %q", id, name)
			}
		}
	}
	if len(seen) != n {
		t.Errorf("%d distinct orders in the table, want %d", len(seen), n)
	}
}
