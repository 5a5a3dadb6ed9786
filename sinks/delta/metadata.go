package delta

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// The protocol Floe needs: reader 1 / writer 1, the lowest, because Floe
// uses no feature of a higher version (no column mapping, no generated
// columns, no invariants or constraints, no change data feed); a column of
// timestamp without time zone needs the timestampNtz table feature and a
// widened column the typeWidening one, which exist only at reader 3 /
// writer 7. The protocol never goes down.

// An upsert table's log (Table.DeletionVectors) also needs the
// deletionVectors reader and writer feature, so reader 3 / writer 7, and
// the table property that lets writers write DVs.
const (
	featureDV    = "deletionVectors"
	propEnableDV = "delta.enableDeletionVectors"
)

// metadata returns the metaData action (nil when the log's is current) and
// the protocol action (nil when the log's suffices) for the table.
func (l *Log) metadata(t Table, at int64) (*Metadata, *Protocol, error) {
	info, err := mapSchema(t.Schema)
	if err != nil {
		return nil, nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	if l.snap.metadata == nil {
		widened, err := info.historyFrom(t.Schema, t.Schemas)
		if err != nil {
			return nil, nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
		proto := neededProtocol(l.snap.protocol, t.features(info))
		spec, err := t.spec(t.SpecID)
		if err != nil {
			return nil, nil, err
		}
		cols := []string{}
		for _, c := range partitionColumns(t.Schema, spec) {
			cols = append(cols, c.name)
		}
		conf := StringMap{"delta.checkpointInterval": strconv.FormatInt(l.opts.CheckpointInterval, 10)}
		if widened {
			conf[enableTypeWideningKey] = "true"
		}
		if t.DeletionVectors {
			conf[propEnableDV] = "true"
		}
		return &Metadata{ID: t.ID, Name: t.Name, Format: Format{Provider: "parquet", Options: StringMap{}},
			SchemaString: info.schemaString, PartitionColumns: cols, CreatedTime: &at, Configuration: conf}, proto, nil
	}
	cur := l.snap.metadata
	if cur.ID != t.ID {
		return nil, nil, fmt.Errorf("%w: the delta log belongs to table id %s, not %s", ErrInvalidCommit, cur.ID, t.ID)
	}
	interval := strconv.FormatInt(l.opts.CheckpointInterval, 10)
	// A log whose table property names another interval (the setting
	// changed) gets a metaData action saying the new one. A log without
	// the property (another writer's) is left as it is.
	have, named := cur.Configuration["delta.checkpointInterval"]
	reconfigure := named && have != interval
	// The same string is an unchanged schema without type changes (a
	// mapped schema has none): the common commit decodes nothing. A log
	// with type changes never matches, and is evolved to keep them.
	var w widening
	if cur.SchemaString != info.schemaString {
		if w, err = info.evolve(cur.SchemaString); err != nil {
			return nil, nil, fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	proto := neededProtocol(l.snap.protocol, t.features(info))
	allow := w.changed && cur.Configuration[enableTypeWideningKey] != "true"
	// Writers may write DVs only while the property says so ("Deletion
	// Vectors"): a table that needs them gets it.
	enableDV := t.DeletionVectors && cur.Configuration[propEnableDV] != "true"
	if cur.SchemaString == info.schemaString && !reconfigure && !allow && !enableDV {
		return nil, proto, nil
	}
	next := *cur
	next.SchemaString = info.schemaString
	if reconfigure || allow || enableDV {
		next.Configuration = maps.Clone(cur.Configuration)
		if next.Configuration == nil {
			next.Configuration = StringMap{}
		}
	}
	if reconfigure {
		next.Configuration["delta.checkpointInterval"] = interval
	}
	if enableDV {
		next.Configuration[propEnableDV] = "true"
	}
	// Writers must not widen a type unless the table property allows it;
	// Floe widens only what Iceberg already did, so it sets the property
	// in the version that records the change.
	if allow {
		next.Configuration[enableTypeWideningKey] = "true"
	}
	return &next, proto, nil
}

// features are the table features the table's log needs: its schema's
// (timestampNtz, typeWidening once a column widened) and, for an upsert
// table, deletionVectors.
func (t Table) features(info schemaInfo) []string {
	if !t.DeletionVectors || slices.Contains(info.features, featureDV) {
		return info.features
	}
	out := append(slices.Clone(info.features), featureDV)
	slices.Sort(out)
	return out
}

// neededProtocol returns the protocol the features need, or nil when the
// current one already allows them.
func neededProtocol(cur *Protocol, features []string) *Protocol {
	if cur == nil {
		if len(features) == 0 {
			return &Protocol{MinReaderVersion: 1, MinWriterVersion: 1}
		}
		return &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: features, WriterFeatures: slices.Clone(features)}
	}
	missing := false
	for _, f := range features {
		if !slices.Contains(cur.ReaderFeatures, f) || !slices.Contains(cur.WriterFeatures, f) {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	// Moving to table features, the features the legacy versions implied
	// must be listed: their use cannot be ruled out.
	reader, writer := legacyFeatures(cur)
	for _, f := range features {
		if !slices.Contains(reader, f) {
			reader = append(reader, f)
		}
		if !slices.Contains(writer, f) {
			writer = append(writer, f)
		}
	}
	slices.Sort(reader)
	slices.Sort(writer)
	return &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: reader, WriterFeatures: writer}
}

// legacyFeatures lists the features a protocol supports, by its versions
// ("Writer Version Requirements", "Reader Version Requirements") or its
// feature lists.
func legacyFeatures(p *Protocol) (reader, writer []string) {
	if p.MinReaderVersion >= 3 {
		reader = slices.Clone(p.ReaderFeatures)
	} else if p.MinReaderVersion == 2 {
		reader = []string{"columnMapping"}
	}
	if p.MinWriterVersion >= 7 {
		return reader, slices.Clone(p.WriterFeatures)
	}
	byVersion := [][]string{2: {"appendOnly", "invariants"}, 3: {"checkConstraints"},
		4: {"changeDataFeed", "generatedColumns"}, 5: {"columnMapping"}, 6: {"identityColumns"}}
	for v := 2; v <= p.MinWriterVersion && v < len(byVersion); v++ {
		writer = append(writer, byVersion[v]...)
	}
	return reader, writer
}
