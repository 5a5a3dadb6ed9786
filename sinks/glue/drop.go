package glue

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/floe-io/floe/sinks/sink"
)

// Drop implements catalogsync.Dropper: a table turned [delta] is published
// only as Delta, so its Iceberg entry goes (its Delta entry, <table>_delta,
// stays). Only an Iceberg entry whose metadata_location is in the table's
// metadata directory is deleted: an entry someone else made under the name
// is not Floe's to remove. Glue's DeleteTable forgets the entry; the files
// stay.
func (s *Syncer) Drop(ctx context.Context, t sink.SyncTable) error {
	name := strings.Join(t.Ident, ".")
	db, glueName, err := s.glueNames(t.Ident, "")
	if err != nil {
		return nil // a name Glue cannot hold was never made there
	}
	got, err := s.client.GetTable(ctx, &glue.GetTableInput{CatalogId: s.catalogID(), DatabaseName: aws.String(db), Name: aws.String(glueName)})
	var nf *gluetypes.EntityNotFoundException
	switch {
	case errors.As(err, &nf):
		return nil // never made, or dropped already
	case err != nil:
		return fmt.Errorf("dropping %s's iceberg entry from glue: reading %s.%s: %w", name, db, glueName, err)
	}
	p := got.Table.Parameters
	if !strings.EqualFold(p["table_type"], "ICEBERG") || path.Dir(p["metadata_location"]) != path.Dir(t.MetadataLocation) {
		s.log.Info("glue entry is not this table's iceberg entry; leaving it", "table", name, "glue", db+"."+glueName,
			"table_type", p["table_type"], "metadata", p["metadata_location"])
		return nil
	}
	_, err = s.client.DeleteTable(ctx, &glue.DeleteTableInput{CatalogId: s.catalogID(), DatabaseName: aws.String(db), Name: aws.String(glueName)})
	if err != nil && !errors.As(err, &nf) {
		return fmt.Errorf("dropping %s's iceberg entry from glue: deleting %s.%s: %w", name, db, glueName, err)
	}
	s.log.Info("dropped glue iceberg table: the table is published as delta only", "table", name, "glue", db+"."+glueName)
	return nil
}
