package glue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/floe-io/floe/internal/metaloc"
	"github.com/floe-io/floe/sinks/sink"
)

// Config says which Glue catalog to mirror into.
type Config struct {
	Region         string // empty: the standard AWS chain
	Endpoint       string // override (moto, VPC endpoint)
	CatalogID      string // account id; empty: the caller's
	DatabasePrefix string
	SkipArchive    bool
	// IOProps open the tables' metadata files (s3.endpoint, keys, ...).
	IOProps iceberg.Properties
}

// Syncer implements catalogsync.Catalog for AWS Glue.
type Syncer struct {
	cfg    Config
	client *glue.Client
	log    *slog.Logger
}

// New returns a Glue syncer. Credentials come from the standard AWS chain
// (environment, shared config, ECS task role, instance profile).
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Syncer, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, awsconfig.WithRegion(cfg.Region))
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration for glue: %w", err)
	}
	if awsCfg.Region == "" && cfg.Endpoint != "" {
		awsCfg.Region = "us-east-1" // requests must be signed for some region
	}
	client := glue.NewFromConfig(awsCfg, func(o *glue.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	})
	if log == nil {
		log = slog.Default()
	}
	return &Syncer{cfg: cfg, client: client, log: log}, nil
}

// Name implements catalogsync.Catalog.
func (s *Syncer) Name() string { return "glue" }

// Database returns the Glue database a namespace maps to: Glue and Athena
// want lower-case names of letters, digits and underscores.
func (s *Syncer) Database(ns []string) string {
	return strings.ToLower(s.cfg.DatabasePrefix + strings.Join(ns, "_"))
}

// Sync implements catalogsync.Catalog: create or overwrite the table's
// Glue entry so that it points at t.MetadataLocation.
func (s *Syncer) Sync(ctx context.Context, t sink.SyncTable) error {
	name := strings.Join(t.Ident, ".")
	db, glueName, err := s.glueNames(t.Ident, "")
	if err != nil {
		return fmt.Errorf("syncing %s to glue: %w", name, err)
	}
	tbl, err := table.NewFromLocation(ctx, t.Ident, t.MetadataLocation, icebergio.LoadFSFunc(s.cfg.IOProps, t.MetadataLocation), nil)
	if err != nil {
		return fmt.Errorf("syncing %s to glue: %w: %w", name, ErrMetadata, err)
	}
	if err := s.ensureDatabase(ctx, db, t.Ident[:len(t.Ident)-1]); err != nil {
		return fmt.Errorf("syncing %s to glue: %w", name, err)
	}
	in := s.tableInput(glueName, tbl, t)
	got, err := s.getOrCreate(ctx, db, in)
	if err != nil {
		return fmt.Errorf("syncing %s to glue: %w", name, err)
	}
	if got == nil {
		s.log.Info("created glue table", "table", name, "glue", db+"."+*in.Name, "metadata", t.MetadataLocation)
		return nil
	}
	if cur := got.Table.Parameters["metadata_location"]; metaloc.NewerThan(cur, t.MetadataLocation) {
		// A later committer already moved the entry past this pointer;
		// writing ours would move Glue backwards.
		s.log.Info("glue table is ahead; not moving it back", "table", name, "glue", cur, "ours", t.MetadataLocation)
		return nil
	}
	// The VersionId makes the update optimistic: a change made in
	// between fails it, and the next attempt reads and overwrites again.
	_, err = s.client.UpdateTable(ctx, &glue.UpdateTableInput{
		CatalogId: s.catalogID(), DatabaseName: aws.String(db), TableInput: in,
		VersionId: got.Table.VersionId, SkipArchive: aws.Bool(s.cfg.SkipArchive),
	})
	var cm *gluetypes.ConcurrentModificationException
	if errors.As(err, &cm) {
		return fmt.Errorf("syncing %s to glue: %w: %w", name, ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("syncing %s to glue: updating %s.%s: %w", name, db, *in.Name, err)
	}
	return nil
}

func (s *Syncer) catalogID() *string {
	if s.cfg.CatalogID == "" {
		return nil
	}
	return aws.String(s.cfg.CatalogID)
}

// ensureDatabase creates the namespace's database when it is missing.
func (s *Syncer) ensureDatabase(ctx context.Context, db string, ns []string) error {
	_, err := s.client.GetDatabase(ctx, &glue.GetDatabaseInput{CatalogId: s.catalogID(), Name: aws.String(db)})
	var nf *gluetypes.EntityNotFoundException
	if !errors.As(err, &nf) {
		if err != nil {
			return fmt.Errorf("reading glue database %s: %w", db, err)
		}
		return nil
	}
	_, err = s.client.CreateDatabase(ctx, &glue.CreateDatabaseInput{CatalogId: s.catalogID(), DatabaseInput: &gluetypes.DatabaseInput{
		Name:        aws.String(db),
		Description: aws.String("Floe namespace " + strings.Join(ns, ".")),
	}})
	var exists *gluetypes.AlreadyExistsException
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("creating glue database %s: %w", db, err)
	}
	if err == nil {
		s.log.Info("created glue database", "database", db)
	}
	return nil
}

func (s *Syncer) tableInput(name string, tbl *table.Table, t sink.SyncTable) *gluetypes.TableInput {
	params := map[string]string{
		"table_type":        "ICEBERG",
		"metadata_location": t.MetadataLocation,
	}
	if p := t.PreviousMetadataLocation; p != "" && p != t.MetadataLocation {
		params["previous_metadata_location"] = p
	}
	return &gluetypes.TableInput{
		Name:        aws.String(name),
		TableType:   aws.String("EXTERNAL_TABLE"),
		Description: aws.String("Mirrored by Floe from its catalog of record; changes made here are overwritten at the next sync."),
		Parameters:  params,
		StorageDescriptor: &gluetypes.StorageDescriptor{
			Location: aws.String(tbl.Location()),
			Columns:  columns(tbl.Schema()),
		},
	}
}

// getOrCreate reads the entry in.Name of database db, or creates it from in
// when there is none, answering nil then: the Iceberg and the Delta entry
// are found or made the same way. An entry created by someone else between
// the read and the create is ErrConflict (retried by the sync loop).
func (s *Syncer) getOrCreate(ctx context.Context, db string, in *gluetypes.TableInput) (*glue.GetTableOutput, error) {
	got, err := s.client.GetTable(ctx, &glue.GetTableInput{CatalogId: s.catalogID(), DatabaseName: aws.String(db), Name: in.Name})
	var nf *gluetypes.EntityNotFoundException
	switch {
	case errors.As(err, &nf):
		_, err = s.client.CreateTable(ctx, &glue.CreateTableInput{CatalogId: s.catalogID(), DatabaseName: aws.String(db), TableInput: in})
		var exists *gluetypes.AlreadyExistsException
		if errors.As(err, &exists) {
			return nil, fmt.Errorf("created meanwhile by someone else: %w", ErrConflict)
		}
		if err != nil {
			return nil, fmt.Errorf("creating %s.%s: %w", db, *in.Name, err)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s.%s: %w", db, *in.Name, err)
	}
	return got, nil
}
