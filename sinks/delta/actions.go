package delta

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// The actions of the Delta protocol that Floe writes and reads, with the
// protocol's JSON keys ("Actions" in the protocol). Fields Floe never
// writes (deletion vectors, row tracking, clustering) are left out: a
// reader ignores fields it does not know, and so does this one.

// Protocol is the protocol action: the reader and writer versions and, at
// reader 3 / writer 7, the table features.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Format is metaData's format: always parquet with no options.
type Format struct {
	Provider string    `json:"provider"`
	Options  StringMap `json:"options"`
}

// Metadata is the metaData action.
type Metadata struct {
	ID               string    `json:"id"`
	Name             string    `json:"name,omitempty"`
	Description      string    `json:"description,omitempty"`
	Format           Format    `json:"format"`
	SchemaString     string    `json:"schemaString"`
	PartitionColumns []string  `json:"partitionColumns"`
	CreatedTime      *int64    `json:"createdTime,omitempty"`
	Configuration    StringMap `json:"configuration"`
}

// Add is the add action: a data file enters the table.
type Add struct {
	Path             string      `json:"path"`
	PartitionValues  NullableMap `json:"partitionValues"`
	Size             int64       `json:"size"`
	ModificationTime int64       `json:"modificationTime"`
	DataChange       bool        `json:"dataChange"`
	Stats            string      `json:"stats,omitempty"`
	Tags             StringMap   `json:"tags,omitempty"`
	// DeletionVector holds the rows of the file that are not in the table
	// (an upsert table's replaced and deleted rows); nil: none.
	DeletionVector *DeletionVector `json:"deletionVector,omitempty"`

	// dvRows are DeletionVector's rows once this process wrote or read
	// them, so the next commit that deletes from the file does not read
	// its DV file again; dvData is the serialized DV of an add whose
	// descriptor the commit has not stored yet (Log.storeDVs).
	dvRows *RowSet
	dvData []byte
}

// Remove is the remove action: a data file leaves the table (a tombstone
// until it expires).
type Remove struct {
	Path                 string      `json:"path"`
	DeletionTimestamp    *int64      `json:"deletionTimestamp,omitempty"`
	DataChange           bool        `json:"dataChange"`
	ExtendedFileMetadata bool        `json:"extendedFileMetadata,omitempty"`
	PartitionValues      NullableMap `json:"partitionValues,omitempty"`
	Size                 *int64      `json:"size,omitempty"`
	Stats                string      `json:"stats,omitempty"`
	// DeletionVector is the DV of the logical file removed: the remove
	// matches the add of the same path and DV.
	DeletionVector *DeletionVector `json:"deletionVector,omitempty"`
}

// Txn is the txn action (a transaction identifier): the application appId
// has made progress up to version.
type Txn struct {
	AppID       string `json:"appId"`
	Version     int64  `json:"version"`
	LastUpdated *int64 `json:"lastUpdated,omitempty"`
}

// CommitInfo is the commitInfo action: provenance. Offsets and CommitID are
// Floe's: the offsets the table holds after this version (the same map as
// the Iceberg snapshot summary's floe.offsets), the commit's id and the
// ledger entries it commits (as floe.entries in the summary), so a
// committer that finds the log one commit ahead of the replicated state
// can record exactly that commit.
type CommitInfo struct {
	Timestamp           int64             `json:"timestamp"`
	Operation           string            `json:"operation"`
	OperationParameters map[string]string `json:"operationParameters,omitempty"`
	EngineInfo          string            `json:"engineInfo,omitempty"`
	IsBlindAppend       *bool             `json:"isBlindAppend,omitempty"`
	Offsets             map[string]int64  `json:"floe.offsets,omitempty"`
	CommitID            string            `json:"floe.commit-id,omitempty"`
	Entries             []string          `json:"floe.entries,omitempty"`
}

// Action is one line of a commit file: exactly one member is set. Lines of
// action types Floe does not know (cdc, domainMetadata, ...) decode to an
// Action with none set and are ignored, as the protocol asks.
type Action struct {
	CommitInfo *CommitInfo `json:"commitInfo,omitempty"`
	Protocol   *Protocol   `json:"protocol,omitempty"`
	MetaData   *Metadata   `json:"metaData,omitempty"`
	Txn        *Txn        `json:"txn,omitempty"`
	Add        *Add        `json:"add,omitempty"`
	Remove     *Remove     `json:"remove,omitempty"`
}

// encodeActions renders a commit file: one action per line.
func encodeActions(actions []Action) ([]byte, error) {
	var buf bytes.Buffer
	for i, a := range actions {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encoding action %d: %w", i, err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// parseActions decodes a commit file (newline-delimited JSON) and checks
// what replay relies on: required fields present, at most one protocol and
// one metaData, no path added twice, no logical file (path and DV)
// removed twice: a checkpoint holds the tombstones of one path with each
// DV it had. The
// caller bounds the input's size (MaxCommitBytes).
func parseActions(data []byte) ([]Action, error) {
	var out []Action
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	var protocols, metas int
	adds, removes := map[string]bool{}, map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var a Action
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrCorruptLog, line, err)
		}
		if err := a.check(); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrCorruptLog, line, err)
		}
		switch {
		case a.Protocol != nil:
			protocols++
		case a.MetaData != nil:
			metas++
		case a.Add != nil:
			if adds[a.Add.Path] {
				return nil, fmt.Errorf("%w: line %d: path %q added twice", ErrCorruptLog, line, a.Add.Path)
			}
			adds[a.Add.Path] = true
		case a.Remove != nil:
			k := tombstoneKey(a.Remove.Path, a.Remove.DeletionVector)
			if removes[k] {
				return nil, fmt.Errorf("%w: line %d: logical file %q removed twice", ErrCorruptLog, line, a.Remove.Path)
			}
			removes[k] = true
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptLog, err)
	}
	if protocols > 1 || metas > 1 {
		return nil, fmt.Errorf("%w: %d protocol and %d metaData actions in one version", ErrCorruptLog, protocols, metas)
	}
	return out, nil
}

// check refuses an action replay cannot use.
func (a Action) check() error {
	n := 0
	for _, set := range []bool{a.CommitInfo != nil, a.Protocol != nil, a.MetaData != nil, a.Txn != nil, a.Add != nil, a.Remove != nil} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return fmt.Errorf("%d actions on one line", n)
	case a.Protocol != nil && (a.Protocol.MinReaderVersion < 1 || a.Protocol.MinWriterVersion < 1):
		return fmt.Errorf("protocol versions %d/%d", a.Protocol.MinReaderVersion, a.Protocol.MinWriterVersion)
	case a.MetaData != nil && (a.MetaData.ID == "" || a.MetaData.SchemaString == ""):
		return fmt.Errorf("metaData without id or schemaString")
	case a.Txn != nil && a.Txn.AppID == "":
		return fmt.Errorf("txn without appId")
	case a.Add != nil && a.Add.Path == "":
		return fmt.Errorf("add without path")
	case a.Remove != nil && a.Remove.Path == "":
		return fmt.Errorf("remove without path")
	case a.Add != nil && a.Add.DeletionVector != nil:
		return a.Add.DeletionVector.check()
	case a.Remove != nil && a.Remove.DeletionVector != nil:
		return a.Remove.DeletionVector.check()
	}
	return nil
}
