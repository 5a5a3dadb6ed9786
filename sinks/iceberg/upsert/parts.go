package upsert

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// A partitioned upsert table. The Iceberg spec applies a position-delete
// file only to data files of its own partition (spec id and partition
// values), so a commit's deletes are written as one file per partition of
// the data files they target, with that file's spec and values. The key
// index is keyed by Kafka partition and key, not by the table's partition:
// a key whose new row lands in another partition (a region that changed)
// still finds its previous row, wherever it lives, and deletes it there,
// so the key has exactly one live row.

// deleteGroup is the position deletes of one table partition.
type deleteGroup struct {
	spec      iceberg.PartitionSpec
	partition map[int]any
	dels      []Delete
}

// partitioned reports whether any of the table's specs partitions it.
func Partitioned(meta table.Metadata) bool {
	for _, s := range meta.PartitionSpecs() {
		if s.NumFields() > 0 {
			return true
		}
	}
	return false
}

// deleteGroups splits dels (sorted by path and position) by the partition
// of the data file each targets: the files this commit adds, or the live
// files of tbl. An unpartitioned table is one group in its spec.
func deleteGroups(ctx context.Context, tbl *table.Table, adding []iceberg.DataFile, dels []Delete) ([]deleteGroup, error) {
	meta := tbl.Metadata()
	if !Partitioned(meta) {
		return []deleteGroup{{spec: tbl.Spec(), dels: dels}}, nil
	}
	files := map[string]iceberg.DataFile{}
	for _, df := range adding {
		files[df.FilePath()] = df
	}
	if tbl.CurrentSnapshot() != nil {
		tasks, err := tbl.Scan().PlanFiles(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the live files for partitioned deletes: %w", err)
		}
		for _, t := range tasks {
			files[t.File.FilePath()] = t.File
		}
	}
	specs := map[int]iceberg.PartitionSpec{}
	for _, s := range meta.PartitionSpecs() {
		specs[s.ID()] = s
	}
	groups := map[string]*deleteGroup{}
	for _, d := range dels {
		df, ok := files[d.Path]
		if !ok {
			return nil, fmt.Errorf("a position delete targets %s, which is not a data file of the table", d.Path)
		}
		spec, ok := specs[int(df.SpecID())]
		if !ok {
			return nil, fmt.Errorf("data file %s: the table has no partition spec %d", d.Path, df.SpecID())
		}
		id := PartitionID(df)
		g := groups[id]
		if g == nil {
			g = &deleteGroup{spec: spec, partition: maps.Clone(df.Partition())}
			groups[id] = g
		}
		g.dels = append(g.dels, d)
	}
	out := make([]deleteGroup, 0, len(groups))
	for _, id := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, *groups[id])
	}
	return out, nil
}

// PartitionID names a data file's partition: its spec id and its values by
// partition field id.
func PartitionID(df iceberg.DataFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", df.SpecID())
	p := df.Partition()
	for _, id := range slices.Sorted(maps.Keys(p)) {
		fmt.Fprintf(&b, " %d=%T:%q", id, p[id], fmt.Sprint(p[id])) // quoted: no two partitions share a name
	}
	return b.String()
}

// WriteDeletes writes dels (sorted by path and position) as the
// position-delete files of a commit that adds the data files adding:
// one per partition of the data files they target, in the table's data
// directory. The caller adds them to its row delta.
func WriteDeletes(ctx context.Context, tbl *table.Table, adding []iceberg.DataFile, dels []Delete) ([]iceberg.DataFile, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	groups, err := deleteGroups(ctx, tbl, adding, dels)
	if err != nil {
		return nil, err
	}
	out := make([]iceberg.DataFile, 0, len(groups))
	for _, g := range groups {
		del, err := writePosDeletes(fs, tbl.Location(), g.spec, g.partition, g.dels)
		if err != nil {
			return nil, err
		}
		out = append(out, del)
	}
	return out, nil
}
