package fsm_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/floe-io/floe/internal/config"

	. "github.com/floe-io/floe/cluster/fsm"
)

// TestTableSettingsAreGated: every table setting that an older build would
// silently drop needs every member at ProtocolTableSettings, so the gate
// refuses a PutMapping that sets it while a level-3 member is registered,
// naming that member, and passes once the member is at level 4:
//   - storage_class: an older build writes data files in the bucket's default class;
//   - formats [iceberg, delta] or [delta]: an older committer writes no Delta log (and publishes Iceberg);
//   - mode upsert / key: an older build writes the table as append, every version of a key a row;
//   - delta.checkpoint_interval / log_retention: an older committer uses its fixed 10 versions and 30 days.
//
// A mapping that sets none of them (or sets the default explicitly) is not
// gated and keeps the bytes an older node writes; a gated one round-trips
// through its replicated JSON.
func TestTableSettingsAreGated(t *testing.T) {
	base := config.Table{Topic: "t", Namespace: "n", Name: "t"}
	with := func(edit func(*config.Table)) config.Table {
		tbl := base
		edit(&tbl)
		return tbl
	}
	for _, tc := range []struct {
		name  string
		table config.Table
		gated bool
	}{
		{"no new setting", base, false},
		{"formats [iceberg]", with(func(t *config.Table) { t.Formats = []string{"iceberg"} }), false},
		{"mode append", with(func(t *config.Table) { t.Mode = config.ModeAppend }), false},
		{"storage_class", with(func(t *config.Table) { t.StorageClass = "INTELLIGENT_TIERING" }), true},
		{"formats [iceberg, delta]", with(func(t *config.Table) { t.Formats = []string{"iceberg", "delta"} }), true},
		// Published as Delta only: an older committer would publish the
		// table as Iceberg and write no Delta log.
		{"formats [delta]", with(func(t *config.Table) { t.Formats = []string{"delta"} }), true},
		{"mode upsert by the Kafka key", with(func(t *config.Table) { t.Mode = config.ModeUpsert }), true},
		{"mode upsert by fields", with(func(t *config.Table) { t.Mode, t.Key = config.ModeUpsert, []string{"id", "region"} }), true},
		{"delta.checkpoint_interval", with(func(t *config.Table) { t.Delta.CheckpointInterval = 5 }), true},
		{"delta.log_retention", with(func(t *config.Table) { t.Delta.LogRetention = config.Duration(48 * time.Hour) }), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := New()
			for i, m := range []Member{
				{ID: "a", ProposalIDs: true, Protocol: ProtocolTableSettings},
				{ID: "b", ProposalIDs: true, Protocol: ProtocolGating},
			} {
				if err := apply(t, f, uint64(i+1), RegisterNode{Node: m}); err != nil {
					t.Fatal(err)
				}
			}
			spec := SpecOf(tc.table)
			put := PutMapping{Mapping: Mapping{Name: "m", Table: spec}, Create: true}
			_, err := f.GateCommand(put, ProtocolLevel)
			if refused := errors.Is(err, ErrProtocolTooLow); refused != tc.gated {
				t.Fatalf("gate with a level-3 member: %v, want refused %v", err, tc.gated)
			}
			if tc.gated && !strings.Contains(err.Error(), "b at level 3") {
				t.Fatalf("refusal %q does not name the lagging member b", err)
			}
			raw, _ := json.Marshal(spec)
			if !tc.gated {
				if old, _ := json.Marshal(SpecOf(base)); string(raw) != string(old) {
					t.Fatalf("bytes %s, want the older node's %s", raw, old)
				}
				return
			}
			var back TableSpec
			if err := json.Unmarshal(raw, &back); err != nil || back.Level() != ProtocolTableSettings ||
				!reflect.DeepEqual(back.Config(), spec.Config()) {
				t.Fatalf("round trip of %s: %+v (level %d), %v", raw, back.Config(), back.Level(), err)
			}
			if err := apply(t, f, 3, RegisterNode{Node: Member{ID: "b", ProposalIDs: true, Protocol: ProtocolTableSettings}}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.GateCommand(put, ProtocolLevel); err != nil {
				t.Fatalf("every member at level 4: %v", err)
			}
		})
	}
}

// TestPartitionedUpsertIsGated: an upsert mapping with partition_by needs
// every member at ProtocolPartitionedUpsert: a level-4 committer would
// write its position deletes unpartitioned, which readers apply to no
// data file of a partition. The gate refuses it while a level-4 member is
// registered, naming it, and passes once the member is at level 5; an
// upsert mapping without partition_by still needs level 4 only.
func TestPartitionedUpsertIsGated(t *testing.T) {
	part := config.Table{Topic: "t", Namespace: "n", Name: "t", Mode: config.ModeUpsert,
		PartitionBy: []config.PartitionField{{Column: "region", Transform: "identity"}}}
	plain := part
	plain.PartitionBy = nil
	f := New()
	for i, m := range []Member{
		{ID: "a", ProposalIDs: true, Protocol: ProtocolPartitionedUpsert},
		{ID: "b", ProposalIDs: true, Protocol: ProtocolTableSettings},
	} {
		if err := apply(t, f, uint64(i+1), RegisterNode{Node: m}); err != nil {
			t.Fatal(err)
		}
	}
	if lv := SpecOf(part).Level(); lv != ProtocolPartitionedUpsert {
		t.Fatalf("level of a partitioned upsert mapping %d, want %d", lv, ProtocolPartitionedUpsert)
	}
	put := func(tbl config.Table) error {
		_, err := f.GateCommand(PutMapping{Mapping: Mapping{Name: "m", Table: SpecOf(tbl)}, Create: true}, ProtocolLevel)
		return err
	}
	if err := put(part); !errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "b at level 4") {
		t.Fatalf("partitioned upsert with a level-4 member: %v, want refused naming b", err)
	}
	if err := put(plain); err != nil {
		t.Fatalf("unpartitioned upsert with level-4 members: %v", err)
	}
	if err := apply(t, f, 3, RegisterNode{Node: Member{ID: "b", ProposalIDs: true, Protocol: ProtocolPartitionedUpsert}}); err != nil {
		t.Fatal(err)
	}
	if err := put(part); err != nil {
		t.Fatalf("every member at level 5: %v", err)
	}
}

// TestGzipMetadataIsGated: a table created on, or swapped to, a gzip
// metadata file needs every member at ProtocolGzipMetadata (an older node
// would fail to parse the file); plain files stay at the base level.
func TestGzipMetadataIsGated(t *testing.T) {
	f := New()
	for i, m := range []Member{
		{ID: "a", ProposalIDs: true, Protocol: ProtocolGzipMetadata},
		{ID: "b", ProposalIDs: true, Protocol: ProtocolPartitionedUpsert},
	} {
		if err := apply(t, f, uint64(i+1), RegisterNode{Node: m}); err != nil {
			t.Fatal(err)
		}
	}
	const dir = "s3://b/db/t/metadata/"
	for _, c := range []struct {
		name string
		cmd  Command
		gz   bool
	}{
		{"create plain", CreateTable{Ident: []string{"db", "t"}, MetadataLocation: dir + "00000-a.metadata.json"}, false},
		{"create gzip", CreateTable{Ident: []string{"db", "t"}, MetadataLocation: dir + "00000-a.gz.metadata.json"}, true},
		{"swap plain", CommitTables{Swaps: []TableSwap{{Table: "db\x1ft", New: dir + "00001-b.metadata.json"}}}, false},
		{"swap gzip", CommitTables{Swaps: []TableSwap{{Table: "db\x1ft", New: dir + "00001-b.gz.metadata.json"}}}, true},
		{"swap java gzip name", CommitTables{Swaps: []TableSwap{{Table: "db\x1ft", New: dir + "00001-b.metadata.json.gz"}}}, true},
	} {
		_, err := f.GateCommand(c.cmd, ProtocolLevel)
		if c.gz != (err != nil) {
			t.Errorf("%s with a level-5 member: %v", c.name, err)
		}
		if c.gz && (!errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "b at level 5")) {
			t.Errorf("%s: %v, want refused naming b", c.name, err)
		}
	}
	if err := apply(t, f, 3, RegisterNode{Node: Member{ID: "b", ProposalIDs: true, Protocol: ProtocolGzipMetadata}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.GateCommand(CommitTables{Swaps: []TableSwap{{Table: "db\x1ft", New: dir + "00001-b.gz.metadata.json"}}}, ProtocolLevel); err != nil {
		t.Fatalf("every member at level 6: %v", err)
	}
}

// TestOperatorDrainIsGated: an operator's drain mark needs every member at
// ProtocolOperatorDrain (an older member would drop the field and its
// membership would part from the others'); a plain drain stays at the base
// level. Applied, the process's own drain keeps an operator's mark and an
// undrain clears both.
func TestOperatorDrainIsGated(t *testing.T) {
	f := New()
	for i, m := range []Member{
		{ID: "a", ProposalIDs: true, Protocol: ProtocolOperatorDrain},
		{ID: "b", ProposalIDs: true, Protocol: ProtocolGzipMetadata},
	} {
		if err := apply(t, f, uint64(i+1), RegisterNode{Node: m}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.GateCommand(DrainNode{ID: "a", Draining: true}, ProtocolLevel); err != nil {
		t.Fatalf("a plain drain with a level-6 member: %v", err)
	}
	if _, err := f.GateCommand(DrainNode{ID: "a", Draining: true, Operator: true}, ProtocolLevel); !errors.Is(err, ErrProtocolTooLow) || !strings.Contains(err.Error(), "b at level 6") {
		t.Fatalf("an operator's drain with a level-6 member: %v, want refused naming b", err)
	}
	if err := apply(t, f, 3, RegisterNode{Node: Member{ID: "b", ProposalIDs: true, Protocol: ProtocolOperatorDrain}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.GateCommand(DrainNode{ID: "a", Draining: true, Operator: true}, ProtocolLevel); err != nil {
		t.Fatalf("every member at level 7: %v", err)
	}
	mark := func() (bool, bool) {
		var d, op bool
		f.Read(func(s *State) { d, op = s.Nodes["a"].Draining, s.Nodes["a"].DrainedByOperator })
		return d, op
	}
	for i, step := range []struct {
		cmd        DrainNode
		draining   bool
		byOperator bool
	}{
		{DrainNode{ID: "a", Draining: true, Operator: true}, true, true},
		{DrainNode{ID: "a", Draining: true}, true, true}, // the process drains at shutdown
		{DrainNode{ID: "a", Draining: false}, false, false},
		{DrainNode{ID: "a", Draining: true}, true, false},
	} {
		if err := apply(t, f, uint64(4+i), step.cmd); err != nil {
			t.Fatal(err)
		}
		if d, op := mark(); d != step.draining || op != step.byOperator {
			t.Fatalf("after %+v: draining %v by operator %v, want %v %v", step.cmd, d, op, step.draining, step.byOperator)
		}
	}
}
