package admin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/floe-io/floe/internal/status"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// bigBackend answers a status report the size of a busy node: 50 tables of
// 8 partitions and 2 catalogs each.
type bigBackend struct {
	fakeBackend
	rep status.Report
}

func newBigBackend() *bigBackend {
	b := &bigBackend{rep: status.Report{Node: "n1", Leader: "n1", RaftState: "Leader"}}
	for i := range 50 {
		t := status.TableReport{Table: fmt.Sprintf("db.t%02d", i), State: "RUNNING", Rows: 1e6, LastCommit: time.Unix(1700000000, 0),
			Catalogs: []status.CatalogReport{{Catalog: "glue", InSync: true}, {Catalog: "polaris", InSync: true}}}
		for p := range 8 {
			t.Partitions = append(t.Partitions, status.PartitionReport{Topic: t.Table, Partition: int32(p), Committed: 1e5, HighWatermark: 1e5 + 10, Lag: 10})
		}
		b.rep.Tables = append(b.rep.Tables, t)
	}
	return b
}

func (b *bigBackend) Report(context.Context) (status.Report, error) { return b.rep, nil }

// BenchmarkListTables: the admin API's ListTables over gRPC and over the
// HTTP gateway, against "backend": the backend building the same answer with
// no API in between (the raw limit). Ratios: docs/benchmarks.md.
func BenchmarkListTables(b *testing.B) {
	bk := newBigBackend()
	s, err := ListenAPI("127.0.0.1:0", bk, Options{})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = s.Serve() }()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	}()
	ctx := context.Background()
	b.Run("backend", func(b *testing.B) {
		for b.Loop() {
			rep, _ := bk.Report(ctx)
			out := &adminv1.ListTablesResponse{}
			for _, tr := range rep.Tables {
				out.Tables = append(out.Tables, tableToProto(tr))
			}
		}
	})
	b.Run("grpc", func(b *testing.B) {
		cc := dialBench(b, s.Addr())
		c := adminv1.NewTableServiceClient(cc)
		for b.Loop() {
			if _, err := c.ListTables(ctx, &adminv1.ListTablesRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("http", func(b *testing.B) {
		for b.Loop() {
			resp, err := http.Get("http://" + s.Addr() + "/v1/tables")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

func dialBench(b *testing.B, addr string) *grpc.ClientConn {
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cc.Close() })
	return cc
}
