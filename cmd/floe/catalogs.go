package main

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/floe-io/floe/auth"
	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/restcatalog"
)

// catalogParts are the node's Iceberg REST catalog endpoint and its
// one-way mirrors to external catalogs.
type catalogParts struct {
	listener  *restcatalog.Listener // nil when served on the admin port
	listenErr chan error
	uri       string // the catalog URI clients use
}

// startCatalogs serves the REST catalog (on the admin port or its own
// listener). The catalog of record must exist.
func (n *floeNode) startCatalogs() error {
	n.catalogs = &catalogParts{}
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
	})
	if cfg.Server.Addr == "" {
		n.admin.Handle(restcatalog.MountPath+"/", h.Mount())
		n.catalogs.uri = "http://" + n.admin.Addr() + restcatalog.MountPath
	} else {
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
func (n *floeNode) stopCatalogs() {
	if n.catalogs == nil || n.catalogs.listener == nil {
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
		for k, v := range ioProps(w) {
			p[k] = v
		}
	}
	return p
}
