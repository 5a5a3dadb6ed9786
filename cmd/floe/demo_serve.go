package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/cmd/floe/node"
)

// demoToken is a fresh admin token for one demo run: printed for the
// console and floe ctl, never written to a file.
func demoToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the demo's token: %w", err)
	}
	return "demo-" + hex.EncodeToString(b), nil
}

// serveDemo is floe demo --serve after the summary: the producer goes on
// slowly so the console has something moving, and the node answers on its
// admin port until ctx ends (SIGINT or SIGTERM), which is a clean stop.
func serveDemo(ctx context.Context, out io.Writer, n *node.Node, cl *kgo.Client, token string, o demoOptions, produced, bad *atomic.Int64) error {
	prodErr := make(chan error, 1)
	go func() { prodErr <- produceOrders(ctx, cl, o.records, -1, o.records/2, o.serveRate, produced, bad) }()
	writeServeHelp(out, n.AdminAddr(), token, o.serveRate)
	select {
	case <-ctx.Done():
	case err := <-prodErr:
		if ctx.Err() == nil && err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("producing: %w", err)
		}
	}
	fmt.Fprintf(out, "\nstopping: %d orders produced in all; the data stays in %s\n", produced.Load(), o.dir)
	return nil
}

// writeServeHelp prints where the running node answers and what to try.
func writeServeHelp(out io.Writer, addr, token string, rate int) {
	floe := demoBinary()
	conn := fmt.Sprintf("--addr %s --token %s", addr, token)
	fmt.Fprintf(out, "\nServing until Ctrl-C: the broker, a producer (%d orders a second) and the node keep running.\n", rate)
	fmt.Fprintf(out, "  console   http://%s/ui/  (log in with the token)\n", addr)
	fmt.Fprintf(out, "  token     %s  (admin scope; this run only)\n", token)
	fmt.Fprintf(out, "  API       curl -H 'Authorization: Bearer %s' http://%s/v1/status\n", token, addr)
	fmt.Fprintf(out, "  catalog   http://%s/iceberg  (Iceberg REST catalog, the token as bearer token)\n", addr)
	fmt.Fprintf(out, "Try:\n")
	fmt.Fprintf(out, "  %s status %s\n", floe, conn)
	fmt.Fprintf(out, "  %s ctl tables get demo.orders %s\n", floe, conn)
	fmt.Fprintf(out, "  %s ctl tables pause demo.orders %s\n", floe, conn)
	fmt.Fprintf(out, "  %s ctl tables resume demo.orders %s\n", floe, conn)
	fmt.Fprintf(out, "  %s -c \"from pyiceberg.catalog import load_catalog; c = load_catalog('floe', type='rest', uri='http://%s/iceberg', token='%s'); print(c.load_table('demo.orders').scan().to_arrow().num_rows)\"\n",
		demoVenvPython(), addr, token)
}

// demoBinary is how to run this floe again from the same directory: the
// binary itself (make demo's bin/floe), or go run when this is go run's
// temporary build.
func demoBinary() string {
	exe := os.Args[0]
	if strings.Contains(exe, "go-build") || strings.HasSuffix(exe, ".test") {
		return "go run ./cmd/floe"
	}
	return exe
}
