package backend

import (
	"crypto/tls"
	"log/slog"

	"github.com/floe-io/floe/cluster/catalog"
	"github.com/floe-io/floe/cluster/raftnode"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker"
	"github.com/floe-io/floe/worker/catalogsync"
	"github.com/floe-io/floe/worker/source"
)

// Backend answers the admin API (admin.Backend), the status report and
// its sources (metrics, notifications, the console) for one node, from the
// node's Raft member, replicated state and worker.
type Backend struct {
	cfg     config.Config
	log     *slog.Logger
	raft    *raftnode.Node
	peers   peerClient // calls to other nodes' admin APIs (peers.go)
	history *status.History
	// started is closed once the worker runs: until then the node is
	// joining, and the parts below are not set (every call that needs them
	// checks it first).
	started <-chan struct{}

	worker      *worker.Worker
	catalog     *catalog.Catalog
	kafka       *source.KafkaClient // rewinds resolve offsets with it (api_tables.go)
	catalogSync *catalogsync.Sync   // nil without external catalogs
	catalogURI  string              // the REST catalog clients use
}

// Deps is what a Backend needs from the start: the node's configuration,
// its Raft member, its admin port's TLS (peers are called with the same),
// and the channel closed once the node has started.
type Deps struct {
	Config   config.Config
	Log      *slog.Logger
	Raft     *raftnode.Node
	AdminTLS *tls.Config
	Started  <-chan struct{}
	History  *status.History
}

// New returns the backend of a node that is joining its group; Attach
// gives it the worker's parts before the node starts.
func New(d Deps) *Backend {
	return &Backend{cfg: d.Config, log: d.Log, raft: d.Raft, history: d.History, started: d.Started,
		peers: newPeerClient(d.Config, d.AdminTLS)}
}

// Parts are a started node's worker, catalog of record, Kafka client and
// catalog mirrors.
type Parts struct {
	Worker      *worker.Worker
	Catalog     *catalog.Catalog
	Kafka       *source.KafkaClient
	CatalogSync *catalogsync.Sync // nil without external catalogs
	CatalogURI  string
}

// Attach gives the backend the node's parts; the node calls it once,
// before it closes Started.
func (b *Backend) Attach(p Parts) {
	b.worker, b.catalog, b.kafka, b.catalogSync, b.catalogURI = p.Worker, p.Catalog, p.Kafka, p.CatalogSync, p.CatalogURI
}
