//go:build long

package e2e

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/floe-io/floe/internal/offsetcheck"
	"github.com/floe-io/floe/internal/testing/wait"
	"github.com/floe-io/floe/proto/restcatalog"
)

// TestRESTCatalogCluster asks every node of a 3-node fleet of real floe
// processes for the tables through its own Iceberg REST endpoint, with
// iceberg-go's REST client and a bearer token. Under load, a strong read
// (X-Floe-Consistency: strong) on any node returns a metadata version no
// older than the leader's before the request and no newer than the
// leader's after it. Once the producer stopped and every table caught up,
// every node lists the namespace, and its strong load of each table
// returns exactly the leader's current metadata location (retried when a
// compaction commits during the load); scanning through
// the loaded table reads every produced (partition, offset) exactly once.
func TestRESTCatalogCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end cluster")
	}
	f := newFleet(t)
	f.cfgExtra = map[string]any{"auth": map[string]any{"tokens": restTestToken + ":read"}}
	f.adminToken = restTestToken
	nodes := f.startNew(3, 3, "n", false)
	f.settle(2 * time.Minute)
	p := f.startProducer(1)
	f.waitCommitted(time.Minute)
	ctx := context.Background()

	catalogs := map[string]*rest.Catalog{}
	for _, n := range nodes {
		uri := "http://" + n.adminAddr + restcatalog.MountPath
		if _, err := rest.NewCatalog(ctx, "floe", uri); err == nil {
			t.Fatalf("%s: the endpoint let a client without a token in", n.id)
		}
		cat, err := rest.NewCatalog(ctx, "floe", uri, rest.WithOAuthToken(restTestToken),
			rest.WithAdditionalProps(map[string]string{"header." + restcatalog.ConsistencyHeader: "strong"}))
		if err != nil {
			t.Fatalf("%s: %v", n.id, err)
		}
		catalogs[n.id] = cat
	}

	// Under load: strong reads on every node, bracketed by the leader.
	var strongReads int
	for round := range 3 {
		for _, n := range nodes {
			for _, topic := range f.topics {
				before := leaderLocation(t, f, topic)
				tbl, err := catalogs[n.id].LoadTable(ctx, table.Identifier{fleetNamespace, topic})
				if err != nil {
					t.Fatalf("round %d, %s: loading %s: %v", round, n.id, topic, err)
				}
				after := leaderLocation(t, f, topic)
				got := metadataVersion(t, tbl.MetadataLocation())
				if lo, hi := metadataVersion(t, before), metadataVersion(t, after); got < lo || got > hi {
					t.Fatalf("round %d, %s: strong read of %s returned version %d (%s); the leader had %d before and %d after",
						round, n.id, topic, got, tbl.MetadataLocation(), lo, hi)
				}
				strongReads++
			}
		}
		// The next round reads tables the load has committed to since.
		last := metadataVersion(t, leaderLocation(t, f, f.topics[0]))
		wait.For(t, time.Minute, "a commit between rounds", func() bool {
			return metadataVersion(t, leaderLocation(t, f, f.topics[0])) > last
		})
	}
	f.event("under load: %d strong loads over %d nodes each within the leader's versions before and after", strongReads, len(nodes))

	produced := p.stop()
	f.verify(produced, 2*time.Minute)
	want := slices.Clone(f.topics)
	slices.Sort(want)
	for _, n := range nodes {
		cat := catalogs[n.id]
		nss, err := cat.ListNamespaces(ctx, nil)
		if err != nil || len(nss) != 1 || strings.Join(nss[0], ".") != fleetNamespace {
			t.Fatalf("%s: namespaces %v %v", n.id, nss, err)
		}
		var names []string
		for id, err := range cat.ListTables(ctx, table.Identifier{fleetNamespace}) {
			if err != nil {
				t.Fatalf("%s: listing tables: %v", n.id, err)
			}
			names = append(names, id[len(id)-1])
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Fatalf("%s: tables %v, want %v", n.id, names, want)
		}
		var total int64
		for _, topic := range f.topics {
			// Compaction may commit meanwhile (same rows, new metadata):
			// a load counts when the leader had one location throughout.
			var tbl *table.Table
			for try := 0; ; try++ {
				before := leaderLocation(t, f, topic)
				tbl, err = cat.LoadTable(ctx, table.Identifier{fleetNamespace, topic})
				if err != nil {
					t.Fatalf("%s: loading %s: %v", n.id, topic, err)
				}
				after := leaderLocation(t, f, topic)
				if before != after && try < 5 {
					continue
				}
				if tbl.MetadataLocation() != after {
					t.Fatalf("%s: strong read of %s returned %s, the leader has %s (before the read: %s)", n.id, topic, tbl.MetadataLocation(), after, before)
				}
				break
			}
			counts, rows, err := offsetcheck.Counts(ctx, tbl) // scans through the REST-loaded table's FileIO
			if err != nil {
				t.Fatalf("%s: %v", n.id, err)
			}
			var wantRows int64
			for part := range fleetPartitions {
				tp := fmt.Sprintf("%s/%d", topic, part)
				wantRows += produced[tp]
				for off := range produced[tp] {
					if c := counts[tp][off]; c != 1 {
						t.Fatalf("%s: %s offset %s@%d read %d times through the REST catalog", n.id, topic, tp, off, c)
					}
				}
			}
			if rows != wantRows {
				t.Fatalf("%s: scanned %d rows of %s through the REST catalog, produced %d", n.id, rows, topic, wantRows)
			}
			total += rows
		}
		f.event("%s: listed %d tables, strong loads at the leader's metadata, scanned %d rows, each produced record once", n.id, len(names), total)
	}
}

// leaderLocation is the leader's current metadata location of a topic's table.
func leaderLocation(t *testing.T, f *fleet, topic string) string {
	t.Helper()
	var loc string
	wait.Until(t, 5*time.Second, "the leader's metadata location of "+topic, func() error {
		rep, _, err := f.leaderStatus()
		if err != nil {
			return err
		}
		if tr, ok := tableReport(rep, tableOf(topic)); ok && tr.MetadataLocation != "" {
			loc = tr.MetadataLocation
			return nil
		}
		return fmt.Errorf("no metadata location for %s", tableOf(topic))
	})
	return loc
}

// metadataVersion is the version prefix of a metadata file name
// (<location>/metadata/<version>-<uuid>.metadata.json).
func metadataVersion(t *testing.T, loc string) int {
	t.Helper()
	v, _, ok := strings.Cut(path.Base(loc), "-")
	n, err := strconv.Atoi(v)
	if !ok || err != nil {
		t.Fatalf("metadata location %s has no version prefix", loc)
	}
	return n
}
