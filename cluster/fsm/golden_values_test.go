package fsm_test

import (
	"encoding/json"
	"testing"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
)

// The representative values of the golden files: every command type and a
// snapshot, each field populated, so that a change of any field's encoding
// shows as a diff of testdata/golden. Partition values are numbers and
// strings that survive a JSON round trip in the old map[int]any field.

const goldenTable = "db\x1forders"

func goldenAssignment() *ledger.Assignment { return &ledger.Assignment{Node: "n1", Epoch: 7} }

func goldenFile() ledger.FileDescriptor {
	sort := 0
	return ledger.FileDescriptor{
		Path: "s3://w/db/orders/data/day=2026-01-01/00000-1.parquet", Format: "PARQUET", SpecID: 1,
		RecordCount: 100, SizeBytes: 4096,
		Partition: map[int]any{1000: float64(20454), 1001: "eu"},
		// date 20454 (4 bytes little-endian), "eu" (UTF-8), a null
		PartValues:  map[int][]byte{1000: {0xe6, 0x4f, 0, 0}, 1001: []byte("eu"), 1002: nil},
		ColumnSizes: map[int]int64{1: 100, 2: 200}, ValueCounts: map[int]int64{1: 100, 2: 100},
		NullCounts: map[int]int64{1: 0, 2: 3}, NaNCounts: map[int]int64{3: 1},
		LowerBounds: map[int][]byte{1: {1, 0, 0, 0, 0, 0, 0, 0}}, UpperBounds: map[int][]byte{1: {9, 0, 0, 0, 0, 0, 0, 0}},
		SplitOffsets: []int64{4}, SortOrderID: &sort,
	}
}

func goldenEntry() ledger.Entry {
	dlq := goldenFile()
	dlq.Path = "s3://w/db/orders_dlq/data/00000-1.parquet"
	return ledger.Entry{
		ID: "e1", Node: "n1", Files: []ledger.FileDescriptor{goldenFile()}, DLQFiles: []ledger.FileDescriptor{dlq},
		Ranges:  []ledger.Range{{TopicPartition: ledger.TopicPartition{Topic: "orders", Partition: 2}, From: 10, To: 110, Epoch: 7, MaxTS: 1767225600000}},
		Records: 99, DLQ: 1, Bytes: 8192, WrittenAt: 1767225601000, MaxTimestamp: 1767225600000,
		Tombstones: map[string][]int64{"orders/2": {12, 40}},
	}
}

func goldenConfigTable() config.Table {
	on := true
	return config.Table{
		Topic: "orders", TopicRegex: "orders-(.*)", Namespace: "db", Name: "{topic}", Format: "avro",
		Subject: "{topic}-value", ErrorMode: "log", DeadLetterTopic: "orders-dlq", Tombstones: "dlq",
		StartOffset: "latest", SnapshotMaxAge: config.Duration(7 * 24 * 3600 * 1e9), SnapshotMaxCount: 500,
		OrphanMinAge: config.Duration(24 * 3600 * 1e9),
		Compaction: config.Compaction{Enabled: &on, TargetFileSize: 512 << 20, MinInputFiles: 5, HotMinInputFiles: 16,
			SmallRatio: 0.5, CoolDown: config.Duration(300 * 1e9), MaxBytesPerHour: 10 << 30, Window: "01:00-05:00",
			Interval: config.Duration(60 * 1e9)},
		PartitionBy:     []config.PartitionField{{Column: "_kafka_timestamp", Transform: "day"}, {Column: "region", Transform: "bucket[16]"}},
		MaxNestingDepth: 32, MaxColumns: 500, StorageClass: "INTELLIGENT_TIERING", Formats: []string{"iceberg", "delta"},
		Mode: config.ModeUpsert, Key: []string{"id", "region"},
		Delta: config.DeltaSettings{CheckpointInterval: 20, LogRetention: config.Duration(48 * 3600 * 1e9)},
	}
}

func goldenMapping() fsm.Mapping {
	return fsm.Mapping{Name: "orders", Table: fsm.SpecOf(goldenConfigTable())}
}

// goldenShape is a records.Shape as the admin adapter encodes it.
const goldenShape = `{"Kind":5,"Fields":[{"Name":"id","Shape":{"Kind":2,"Fields":null,"Elem":null,"Key":null,"Precision":0,"Scale":0,"Size":0,"SchemaID":0,"CommittedSchemaID":0},"Committed":true}],"Elem":null,"Key":null,"Precision":0,"Scale":0,"Size":0,"SchemaID":3,"CommittedSchemaID":2}`

func goldenMember() fsm.Member {
	return fsm.Member{ID: "n1", Addr: "10.0.0.1:7000", RPC: "10.0.0.1:7001", Admin: "10.0.0.1:8080",
		Attrs: map[string]string{"zone": "eu-west-1a"}, Version: "1.4.0", Draining: true, DrainedByOperator: true, ProposalIDs: true, Protocol: fsm.ProtocolGating}
}

// goldenCommands returns one fully populated value of every command type,
// in type order.
func goldenCommands(t testing.TB) []fsm.Command {
	tp := ledger.TopicPartition{Topic: "orders", Partition: 2}
	return []fsm.Command{
		fsm.RegisterNode{Node: goldenMember()},
		fsm.CreateNamespace{Parts: []string{"db"}, Props: map[string]string{"owner": "data"}, IfNotExists: true},
		fsm.DropNamespace{Parts: []string{"db"}},
		fsm.UpdateNamespace{Parts: []string{"db"}, Removals: []string{"old"}, Updates: map[string]string{"owner": "ops"}},
		fsm.CreateTable{Ident: []string{"db", "orders"}, MetadataLocation: "s3://w/db/orders/metadata/00000-a.metadata.json"},
		fsm.DropTable{Ident: []string{"db", "orders"}},
		fsm.RecordFiles{Table: goldenTable, Entry: goldenEntry()},
		fsm.CommitTables{Swaps: []fsm.TableSwap{{Table: goldenTable, Expected: "s3://a.json", New: "s3://b.json"}},
			Table: goldenTable, Entries: []string{"e1"}, Committer: goldenAssignment(), CommitID: "c1", At: 1767225602000,
			RewindGen: 2, DeletedRows: 12, Delta: &ledger.DeltaCommit{Sequence: 4, Version: 5}},
		fsm.RegisterSources{Sources: []fsm.TopicSource{{Topic: "orders", Table: goldenTable, Partitions: 12}}},
		fsm.Assign{Partitions: []fsm.PartitionAssignment{{TopicPartition: tp, Assignment: *goldenAssignment()}},
			Committers: []fsm.CommitterAssignment{{Table: goldenTable, Assignment: *goldenAssignment()}}},
		fsm.DrainNode{ID: "n1", Draining: true, Operator: true},
		fsm.RemoveNode{ID: "n1"},
		fsm.RestoreState{State: goldenState(t)},
		fsm.CatalogSynced{Table: goldenTable, Catalog: "glue", MetadataLocation: "s3://b.json", Committer: goldenAssignment(), At: 1767225603000},
		fsm.BackupWritten{Location: "s3://w/_floe/state/latest.json", Applied: 41, At: 1767225604000},
		fsm.ResumeTable{Table: goldenTable, Skips: []fsm.ResumeSkip{{TopicPartition: tp, Offset: 55}}, At: 1767225605000},
		fsm.RequestSchema{Table: goldenTable, ID: "s1", Node: "n1", Shape: json.RawMessage(goldenShape), At: 1767225606000},
		fsm.SchemaApplied{Table: goldenTable, IDs: []string{"s1"}, Err: "column id: cannot narrow", Committer: goldenAssignment(), At: 1767225607000},
		fsm.PutMapping{Mapping: goldenMapping(), Create: true},
		fsm.DeleteMapping{Name: "orders"},
		fsm.PauseTable{Table: goldenTable, At: 1767225608000, By: "token:3f2a9c1e"},
		fsm.RewindTable{Table: goldenTable, To: []fsm.RewindPosition{{TopicPartition: tp, Offset: 40}}, Replace: true, At: 1767225609000, By: "cert:CN=ops"},
	}
}

// goldenState is a state with every map and field populated.
func goldenState(t testing.TB) *fsm.State {
	tp := ledger.TopicPartition{Topic: "orders", Partition: 2}
	m := goldenMapping()
	member := goldenMember()
	var window fsm.ProposalWindow
	if err := json.Unmarshal([]byte(`{"version":1,"applied":[{"id":"p1","index":30},{"id":"p2","index":31,"code":"stale_committer","message":"committing: stale committer"}]}`), &window); err != nil {
		t.Fatal(err)
	}
	return &fsm.State{
		Namespaces: map[string]*fsm.Namespace{"db": {Parts: []string{"db"}, Props: map[string]string{"owner": "data"}}},
		Tables: map[string]*fsm.Table{goldenTable: {Ident: []string{"db", "orders"}, MetadataLocation: "s3://b.json",
			PreviousMetadataLocation: "s3://a.json", Commits: 3, LastCommitAt: 1767225602000, LastCommitID: "c1",
			NewestRecordTS: 1767225600000, Rows: 300, Files: 3, DLQRecords: 1,
			Synced: map[string]fsm.SyncRecord{"glue": {MetadataLocation: "s3://b.json", At: 1767225603000}},
			Delta:  &ledger.DeltaCommit{Sequence: 4, Version: 5}}},
		Ledger: &ledger.Ledger{
			Offsets:     map[string]map[string]*ledger.Offsets{goldenTable: {tp.String(): {Start: 0, Committed: 10, End: 110, NewestTS: 1767225500000}}},
			Pending:     map[string][]ledger.Entry{goldenTable: {goldenEntry()}},
			Assignments: map[string]ledger.Assignment{tp.String(): *goldenAssignment()},
		},
		Nodes:          map[string]*fsm.Member{"n1": &member},
		Sources:        map[string]*fsm.TopicSource{"orders": {Topic: "orders", Table: goldenTable, Partitions: 12}},
		Committers:     map[string]ledger.Assignment{goldenTable: *goldenAssignment()},
		Resumes:        map[string]*fsm.TableResume{goldenTable: {Gen: 2, Skips: map[string]int64{tp.String(): 55}, At: 1767225605000}},
		SchemaRequests: map[string][]fsm.SchemaRequest{goldenTable: {{ID: "s1", Node: "n1", Shape: json.RawMessage(goldenShape), At: 1767225606000, Err: "cannot narrow"}}},
		Mappings:       map[string]*fsm.Mapping{"orders": &m},
		Paused:         map[string]int64{goldenTable: 1767225608000},
		PausedBy:       map[string]string{goldenTable: "token:3f2a9c1e"},
		Rewinds: map[string]*fsm.TableRewind{goldenTable: {Gen: 1, Replace: true, At: 1767225609000,
			From: []fsm.RewindPosition{{TopicPartition: tp, Offset: 10}}, To: []fsm.RewindPosition{{TopicPartition: tp, Offset: 5}},
			ReplaceDone: true, DeletedRows: 12, By: "cert:CN=ops"}},
		Proposals:  &window,
		LastBackup: &fsm.BackupWritten{Location: "s3://w/_floe/state/latest.json", Applied: 41, At: 1767225604000},
		Applied:    42,
		Skipped:    1,
	}
}

// mainReleaseCommands are the values testdata/golden/main was made from:
// the golden commands as the release before the wire format had them (no
// binary partition values).
func mainReleaseCommands(t testing.TB) []fsm.Command {
	out := goldenCommands(t)
	for i, c := range out {
		switch c := c.(type) {
		case fsm.RecordFiles:
			c.Entry = mainReleaseEntry(c.Entry)
			out[i] = c
		case fsm.RestoreState:
			out[i] = fsm.RestoreState{State: mainReleaseState(t)}
		case fsm.RegisterNode:
			c.Node.Protocol = 0 // main registered no protocol level
			c.Node.DrainedByOperator = false
			out[i] = c
		case fsm.DrainNode:
			c.Operator = false // main had one kind of drain mark
			out[i] = c
		case fsm.PutMapping:
			c.Mapping.Table = mainReleaseSpec(c.Mapping.Table)
			out[i] = c
		case fsm.PauseTable:
			c.By = "" // main recorded no caller
			out[i] = c
		case fsm.RewindTable:
			c.By = ""
			out[i] = c
		case fsm.CommitTables:
			c.Delta = nil // main wrote no Delta log
			out[i] = c
		}
	}
	return out
}

// mainReleaseState is the state testdata/golden/main/snapshot.json holds.
func mainReleaseState(t testing.TB) *fsm.State {
	s := goldenState(t)
	for _, m := range s.Nodes {
		m.Protocol = 0
		m.DrainedByOperator = false
	}
	for _, m := range s.Mappings {
		m.Table = mainReleaseSpec(m.Table)
	}
	s.PausedBy = nil // main recorded no caller
	for _, t := range s.Tables {
		t.Delta = nil
	}
	for _, rw := range s.Rewinds {
		rw.By = ""
	}
	for key, entries := range s.Ledger.Pending {
		for i := range entries {
			entries[i] = mainReleaseEntry(entries[i])
		}
		s.Ledger.Pending[key] = entries
	}
	return s
}

// mainReleaseSpec is a mapping's table as main had it: no record limits,
// no storage class, formats or mode.
func mainReleaseSpec(s fsm.TableSpec) fsm.TableSpec {
	s.MaxNestingDepth, s.MaxColumns = 0, 0
	s.StorageClass = ""
	s.Formats = nil
	s.Mode, s.Key = "", nil
	s.DeltaCheckpointInterval, s.DeltaLogRetention = 0, 0
	return s
}

func mainReleaseEntry(e ledger.Entry) ledger.Entry {
	strip := func(files []ledger.FileDescriptor) []ledger.FileDescriptor {
		out := make([]ledger.FileDescriptor, len(files))
		for i, f := range files {
			f.PartValues = nil
			out[i] = f
		}
		return out
	}
	e.Files, e.DLQFiles = strip(e.Files), strip(e.DLQFiles)
	e.Tombstones = nil
	return e
}
