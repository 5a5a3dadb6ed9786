package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"google.golang.org/grpc/codes"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	adminv1 "github.com/floe-io/floe/proto/floe/admin/v1"
)

// TestAPIMappingRecordLimits: a mapping's max_nesting_depth and max_columns
// set through the admin API (gRPC and HTTP/JSON) are validated naming the
// field, read back, and enforced: with 3 and 5, records the node's
// defaults (64, 1000) would take become dead letters naming the mapping's
// limits.
func TestAPIMappingRecordLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(1, "cfg_topic", "lim_grpc", "lim_http")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "cfg_topic", Namespace: "api"}})
	cfg.Auth.Tokens = apiAdminToken + ":admin," + apiReadToken + ":read"
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	wide := make([]string, 8)
	for i := range wide {
		wide[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	create := apiOp{"/floe.admin.v1.TableService/CreateMapping", "POST", "/v1/mappings", true}
	for _, trName := range []string{"grpc", "http"} {
		t.Run(trName, func(t *testing.T) {
			tr := transportTo(t, n, trName)
			topic := "lim_" + trName
			m := &adminv1.Mapping{Name: "lim-" + trName, Topic: topic, Namespace: "lim", ErrorMode: "log", MaxNestingDepth: 3, MaxColumns: 5}
			for _, c := range []struct {
				depth, columns int32
				field          string
			}{{300, 5, "mapping.max_nesting_depth"}, {3, 20000, "mapping.max_columns"}, {-1, 5, "mapping.max_nesting_depth"}} {
				bad := &adminv1.Mapping{Name: m.Name, Topic: topic, Namespace: "lim", MaxNestingDepth: c.depth, MaxColumns: c.columns}
				code, msg := tr.call(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: bad}, &adminv1.WriteResponse{})
				if code != codes.InvalidArgument || !strings.Contains(msg, c.field) {
					t.Fatalf("depth %d, columns %d: %s %q, want InvalidArgument naming %s", c.depth, c.columns, code, msg, c.field)
				}
			}
			var write adminv1.WriteResponse
			if code, msg := tr.call(create, apiAdminToken, &adminv1.CreateMappingRequest{Mapping: m}, &write); code != codes.OK {
				t.Fatalf("create: %s %s", code, msg)
			}
			var got adminv1.Mapping
			get := apiOp{"/floe.admin.v1.TableService/GetMapping", "GET", "/v1/mappings/" + m.Name, false}
			if code, msg := tr.call(get, apiReadToken, &adminv1.GetMappingRequest{Name: m.Name}, &got); code != codes.OK ||
				got.MaxNestingDepth != 3 || got.MaxColumns != 5 {
				t.Fatalf("get: %s %s %+v, want max_nesting_depth 3 and max_columns 5", code, msg, &got)
			}
			produceRaw(t, cl, topic, 0,
				[2][]byte{nil, []byte(`{"id":1,"note":{"x":1}}`)},
				[2][]byte{nil, []byte(`{"id":2,"deep":{"a":{"b":{"c":1}}}}`)}, // 4 levels
				[2][]byte{nil, []byte("{" + strings.Join(wide, ",") + "}")},   // 8 more columns
				[2][]byte{nil, []byte(`{"id":3,"note":{"x":2}}`)})
			waitTable(t, n, "lim."+topic, "good rows and dead letters", time.Minute, func(tr status.TableReport) bool {
				return tr.Rows == 2 && tr.DeadLetterRows == 2
			})
			var reasons []string
			for _, row := range tableRows(t, n, "lim", topic+"_dlq") {
				reasons = append(reasons, row["error"])
			}
			for _, want := range []string{"nests deeper than max_nesting_depth 3", "more than max_columns 5"} {
				if !strings.Contains(strings.Join(reasons, "\n"), want) {
					t.Errorf("no dead letter says %q: %q", want, reasons)
				}
			}
		})
	}
}
