package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/proto/auth"
	"github.com/floe-io/floe/proto/restcatalog"
	"github.com/floe-io/floe/sinks/glue"
	"github.com/floe-io/floe/sinks/restsync"
	"github.com/floe-io/floe/worker/catalogsync"
)

// catalogParts are the node's Iceberg REST catalog endpoint and its
// one-way mirrors to external catalogs.
type catalogParts struct {
	listener  *restcatalog.Listener // nil when served on the admin port
	listenErr chan error
	uri       string // the catalog URI clients use

	sync       *catalogsync.Sync // nil without external catalogs
	syncCancel context.CancelFunc
	syncDone   chan struct{}
}

// startCatalogs serves the REST catalog (on the admin port or its own
// listener) and starts the mirrors to external catalogs. The catalog of
// record must exist.
func (n *Node) startCatalogs() error {
	n.catalogs = &catalogParts{}
	if err := n.serveCatalog(); err != nil {
		return err
	}
	syncers, err := n.catalogSyncers()
	if err != nil {
		return err
	}
	if len(syncers) == 0 {
		return nil
	}
	st := catalogState{node: n.raft, formats: n.worker.Formats, all: n.worker.TableFormats, watchFormats: n.worker.WatchFormats}
	cs := catalogsync.New(catalogsync.Config{
		NodeID: n.cfg.Node.ID, Interval: n.cfg.Catalogs.SyncInterval.D(), Timeout: n.cfg.Catalogs.SyncTimeout.D(),
	}, st, st, syncers, n.log.With("component", "catalog-sync"))
	ctx, cancel := context.WithCancel(context.Background())
	n.catalogs.sync, n.catalogs.syncCancel, n.catalogs.syncDone = cs, cancel, make(chan struct{})
	go func() { defer close(n.catalogs.syncDone); cs.Run(ctx) }()
	n.log.Info("mirroring tables to external catalogs", "catalogs", cs.Catalogs())
	return nil
}

// catalogSyncers builds one syncer per configured external catalog.
func (n *Node) catalogSyncers() ([]catalogsync.Catalog, error) {
	var out []catalogsync.Catalog
	if g := n.cfg.Catalogs.Glue; g.Enabled {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := glue.New(ctx, glue.Config{Region: g.Region, Endpoint: g.Endpoint, CatalogID: g.CatalogID,
			DatabasePrefix: g.DatabasePrefix, SkipArchive: g.SkipArchive, IOProps: IOProps(n.cfg.Warehouse)}, n.log.With("catalog", "glue"))
		if err != nil {
			return nil, err
		}
		out = append(out, s, s.Delta()) // the Delta entry of a table whose formats name delta
	}
	for _, r := range n.cfg.Catalogs.REST {
		rc := restsync.Config{Name: r.Name, URI: r.URI, Warehouse: r.Warehouse, Prefix: r.Prefix, Token: r.Token,
			ClientID: r.ClientID, ClientSecret: r.ClientSecret, TokenURI: r.TokenURI, Scope: r.Scope}
		if r.SigV4.Enabled {
			sig, err := sigV4(r)
			if err != nil {
				return nil, err
			}
			rc.SigV4 = sig
		}
		out = append(out, restsync.New(rc, n.log.With("catalog", r.Name)))
	}
	return out, nil
}

// sigV4 is a REST catalog's signing with the AWS SDK's default credential
// chain. Loading it reads no credentials yet (each signature retrieves
// them, cached), so a node starts while they are not there, and the
// mirror's status shows the error.
func sigV4(r config.RESTCatalog) (*restsync.SigV4, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(r.SigV4.Region))
	if err != nil {
		return nil, fmt.Errorf("catalogs.rest %s: loading AWS credentials for SigV4: %w", r.Name, err)
	}
	return &restsync.SigV4{Service: r.SigV4.SigningName, Region: r.SigV4.Region, Credentials: cfg.Credentials}, nil
}

// serveCatalog serves the Iceberg REST catalog when enabled.
func (n *Node) serveCatalog() error {
	cfg := n.cfg.Catalogs
	if !cfg.Server.Enabled {
		return nil
	}
	tokens, err := auth.Load(n.cfg.Auth.TokensFile, n.cfg.Auth.Tokens)
	if err != nil {
		return fmt.Errorf("starting the REST catalog: %w", err)
	}
	h := restcatalog.New(n.catalog, restcatalog.Options{
		Tokens: tokens, Sync: n.raft, Strong: cfg.Server.Consistency == "strong",
		TableConfig: tableConfig(n.cfg.Warehouse, cfg.Server.VendCredentials), Log: n.log.With("component", "rest-catalog"),
		// A [delta] table's Iceberg metadata is its committer's ledger,
		// not a table to read: it is not served.
		Hide: func(id table.Identifier) bool { return !n.worker.PublishedAsIceberg(ledger.TableKey(id)) },
	})
	if cfg.Server.Addr == "" {
		n.admin.Handle(restcatalog.MountPath+"/", h.Mount())
		n.catalogs.uri = "http://" + n.admin.Addr() + restcatalog.MountPath
	} else {
		if t := cfg.Server.TLS; t.CertFile != "" {
			// A pair that does not load is the configuration's fault, not
			// a failure to listen: floe serve exits with its code.
			if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
				return &ConfigError{Err: fmt.Errorf("catalogs.server.tls.cert_file: %w", err)}
			}
		}
		l, err := restcatalog.Listen(cfg.Server.Addr, h, cfg.Server.TLS.CertFile, cfg.Server.TLS.KeyFile)
		if err != nil {
			return err
		}
		n.catalogs.listener, n.catalogs.listenErr = l, make(chan error, 1)
		go func() { n.catalogs.listenErr <- l.Serve() }()
		n.catalogs.uri = l.URI()
	}
	n.log.Info("serving the Iceberg REST catalog", "uri", n.catalogs.uri, "auth", tokens.Enabled(), "consistency", cfg.Server.Consistency)
	return nil
}

// stopCatalogs stops what startCatalogs started.
func (n *Node) stopCatalogs() {
	if n.catalogs == nil {
		return
	}
	if n.catalogs.sync != nil {
		n.catalogs.syncCancel()
		<-n.catalogs.syncDone
	}
	if n.catalogs.listener == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.catalogs.listener.Shutdown(ctx)
	<-n.catalogs.listenErr
}

// tableConfig is the FileIO configuration a reader gets with each table:
// where the object store is, and its keys only when vending is on.
func tableConfig(w config.Warehouse, vend bool) iceberg.Properties {
	p := iceberg.Properties{}
	if w.S3.Endpoint != "" {
		p[icebergio.S3EndpointURL] = w.S3.Endpoint
		p["s3.path-style-access"] = "true" // an endpoint here is MinIO or another S3-compatible store
	}
	if w.S3.Region != "" {
		p[icebergio.S3Region] = w.S3.Region
		p["client.region"] = w.S3.Region
	}
	if vend {
		for k, v := range IOProps(w) {
			p[k] = v
		}
	}
	return p
}

// catalogState shows the replicated state to catalog sync and records its
// syncs (cluster command CatalogSynced, fenced by the committer epoch).
type catalogState struct {
	node *raftnode.Node
	// formats are a table's formats (worker.Formats), all are every
	// table's (worker.TableFormats): the mappings say them, and a catalog
	// of one format mirrors only its tables.
	formats      func(key string) []string
	all          func() map[string][]string
	watchFormats func() <-chan struct{}
}

var (
	_ catalogsync.State    = catalogState{}
	_ catalogsync.Recorder = catalogState{}
	// The Iceberg mirrors drop the entry of a table turned [delta].
	_ catalogsync.Dropper = (*glue.Syncer)(nil)
	_ catalogsync.Dropper = (*restsync.Syncer)(nil)
)

func (c catalogState) Tables() []catalogsync.Table {
	var out []catalogsync.Table
	c.node.FSM().Read(func(s *fsm.State) {
		for _, key := range s.TableKeys() {
			if t := s.Tables[key]; t.MetadataLocation != "" {
				out = append(out, catalogTable(key, t))
			}
		}
	})
	all := c.all() // outside the FSM's lock: the worker's routes have their own
	for i := range out {
		out[i].Formats = all[out[i].Key]
	}
	return out
}

func (c catalogState) Table(key string) (ct catalogsync.Table, ok bool) {
	c.node.FSM().Read(func(s *fsm.State) {
		if t, found := s.Tables[key]; found && t.MetadataLocation != "" {
			ct, ok = catalogTable(key, t), true
		}
	})
	if ok {
		ct.Formats = c.formats(key)
	}
	return
}

// catalogTable copies a table out of the state (under the FSM's read lock).
func catalogTable(key string, t *fsm.Table) catalogsync.Table {
	ct := catalogsync.Table{Key: key, Ident: slices.Clone(t.Ident), MetadataLocation: t.MetadataLocation,
		PreviousMetadataLocation: t.PreviousMetadataLocation, Synced: map[string]catalogsync.SyncedAt{}}
	for name, r := range t.Synced {
		ct.Synced[name] = catalogsync.SyncedAt{MetadataLocation: r.MetadataLocation, At: time.UnixMilli(r.At)}
	}
	return ct
}

func (c catalogState) Committer(table string) (a ledger.Assignment, ok bool) {
	c.node.FSM().Read(func(s *fsm.State) { a, ok = s.Committers[table] })
	return
}

func (c catalogState) Watch() <-chan struct{} { return c.node.FSM().Watch() }

// WatchFormats is closed when the worker's discovery changes a table's
// formats (worker.WatchFormats): a mapping change reaches the routes after
// the FSM entry that made it.
func (c catalogState) WatchFormats() <-chan struct{} { return c.watchFormats() }

// WatchTable returns a channel closed at the next entry that may change
// table key (fsm.FSM.WatchTable): each table's sync loop waits on it.
func (c catalogState) WatchTable(key string) <-chan struct{} { return c.node.FSM().WatchTable(key) }

func (c catalogState) CatalogSynced(ctx context.Context, table, catalog, location string, committer ledger.Assignment, at time.Time) error {
	_, err := c.node.Apply(ctx, fsm.CatalogSynced{Table: table, Catalog: catalog, MetadataLocation: location, Committer: &committer, At: at.UnixMilli()})
	return err
}
