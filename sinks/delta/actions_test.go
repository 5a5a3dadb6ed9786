package delta

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// TestActionJSON pins each action's JSON to the protocol's keys.
func TestActionJSON(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Action
		want string
	}{
		{"protocol", Action{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 1}},
			`{"protocol":{"minReaderVersion":1,"minWriterVersion":1}}`},
		{"protocol with features", Action{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}},
			`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],"writerFeatures":["timestampNtz"]}}`},
		{"metaData", Action{MetaData: &Metadata{ID: "x", Format: Format{Provider: "parquet"}, SchemaString: `{"type":"struct","fields":[]}`,
			PartitionColumns: []string{"region"}, CreatedTime: ptr(int64(5))}},
			`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["region"],"createdTime":5,"configuration":{}}}`},
		{"add", Action{Add: &Add{Path: "data/a.parquet", PartitionValues: NullableMap{"region": ptr("eu"), "day": nil},
			Size: 10, ModificationTime: 7, DataChange: true, Stats: `{"numRecords":1}`}},
			`{"add":{"path":"data/a.parquet","partitionValues":{"day":null,"region":"eu"},"size":10,"modificationTime":7,"dataChange":true,"stats":"{\"numRecords\":1}"}}`},
		{"add unpartitioned", Action{Add: &Add{Path: "a", PartitionValues: NullableMap{}, Size: 1, ModificationTime: 2}},
			`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false}}`},
		{"remove", Action{Remove: &Remove{Path: "a", DeletionTimestamp: ptr(int64(9)), DataChange: false,
			ExtendedFileMetadata: true, PartitionValues: NullableMap{}, Size: ptr(int64(3))}},
			`{"remove":{"path":"a","deletionTimestamp":9,"dataChange":false,"extendedFileMetadata":true,"size":3}}`},
		{"txn", Action{Txn: &Txn{AppID: "app", Version: 42, LastUpdated: ptr(int64(1))}},
			`{"txn":{"appId":"app","version":42,"lastUpdated":1}}`},
		{"commitInfo", Action{CommitInfo: &CommitInfo{Timestamp: 1, Operation: "STREAMING UPDATE",
			OperationParameters: map[string]string{"epochId": "4"}, EngineInfo: "floe", IsBlindAppend: ptr(true),
			Offsets: map[string]int64{"t/0": 5}, CommitID: "c1", Entries: []string{"e1", "e2"}}},
			`{"commitInfo":{"timestamp":1,"operation":"STREAMING UPDATE","operationParameters":{"epochId":"4"},"engineInfo":"floe","isBlindAppend":true,"floe.offsets":{"t/0":5},"floe.commit-id":"c1","floe.entries":["e1","e2"]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.a)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("got  %s\nwant %s", b, c.want)
			}
			back, err := parseActions(append(b, '\n'))
			if err != nil {
				t.Fatalf("reading it back: %v", err)
			}
			again, _ := json.Marshal(back[0])
			if string(again) != c.want {
				t.Errorf("round trip: %s", again)
			}
		})
	}
}

// TestParseActionsRefuses lists what the log reader refuses.
func TestParseActionsRefuses(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"not json", "{"},
		{"two actions on a line", `{"txn":{"appId":"a","version":1},"add":{"path":"p","size":1}}`},
		{"add without path", `{"add":{"size":1}}`},
		{"remove without path", `{"remove":{"deletionTimestamp":1}}`},
		{"txn without app", `{"txn":{"version":1}}`},
		{"metaData without id", `{"metaData":{"schemaString":"{}"}}`},
		{"protocol zero", `{"protocol":{"minReaderVersion":0,"minWriterVersion":1}}`},
		{"two protocols", "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":1}}\n{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}"},
		{"path added twice", "{\"add\":{\"path\":\"p\"}}\n{\"add\":{\"path\":\"p\"}}"},
		{"map of numbers", `{"add":{"path":"p","partitionValues":{"a":1}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := parseActions([]byte(c.in)); !errors.Is(err, ErrCorruptLog) {
				t.Errorf("got %v, want ErrCorruptLog", err)
			}
		})
	}
}

// TestParseActionsIgnoresUnknown: actions and fields of features Floe does
// not use are skipped, as the protocol asks; maps read in both forms.
func TestParseActionsIgnoresUnknown(t *testing.T) {
	in := strings.Join([]string{
		`{"domainMetadata":{"domain":"x","configuration":"{}","removed":false}}`,
		`{"add":{"path":"p","partitionValues":[{"key":"region","value":"eu"},{"key":"day","value":null}],"size":1,"deletionVector":null,"baseRowId":4}}`,
		``,
	}, "\n")
	acts, err := parseActions([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 2 || acts[0].Add != nil || acts[1].Add == nil {
		t.Fatalf("actions %+v", acts)
	}
	pv := acts[1].Add.PartitionValues
	if len(pv) != 2 || *pv["region"] != "eu" || pv["day"] != nil {
		t.Errorf("partition values %v", pv)
	}
}

// TestOperation names each kind of commit as Delta's writers do.
func TestOperation(t *testing.T) {
	f := []File{{}}
	for _, c := range []struct {
		name string
		c    Commit
		v    int64
		want string
	}{
		{"first version", Commit{Sequence: 1, Add: f}, 0, "CREATE TABLE"},
		{"append", Commit{Sequence: 2, Add: f}, 1, "STREAMING UPDATE"},
		{"offsets only", Commit{Sequence: 3}, 2, "STREAMING UPDATE"},
		{"compaction", Commit{Rearrange: true, Add: f, Remove: f}, 3, "OPTIMIZE"},
		{"rewind delete", Commit{Sequence: 4, Remove: f}, 4, "DELETE"},
		{"schema only", Commit{}, 5, "ADD COLUMNS"},
		{"files without offsets", Commit{Add: f}, 6, "WRITE"},
	} {
		if got := operation(c.c, c.v); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
