package iceberg

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	upsertsink "github.com/floe-io/floe/sinks/iceberg/upsert"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// DeadLetterRow is one row of a dead-letter table as an operator reads it:
// where the record was, why it was refused, and the start of its value.
type DeadLetterRow struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Timestamp time.Time `json:"timestamp,omitzero"`
	Error     string    `json:"error"`
	// Value is the record's value cut to MaxDeadLetterValue bytes (valid
	// UTF-8 shown as text, else as hex) and ValueBytes its whole length.
	Value      string `json:"value"`
	ValueBytes int    `json:"value_bytes"`
}

// MaxDeadLetterValue is how much of a dead letter's value LatestDeadLetters
// shows.
const MaxDeadLetterValue = 256

// deadLetterScanFiles bounds the data files LatestDeadLetters reads: the
// newest ones, so a large dead-letter table costs no more than a small one.
const deadLetterScanFiles = 8

// LatestDeadLetters reads the newest rows of a dead-letter table (at most
// limit, newest Kafka timestamp first) from the data files its newest
// manifests added, without scanning the whole table.
func LatestDeadLetters(ctx context.Context, tbl *table.Table, limit int) ([]DeadLetterRow, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil || limit <= 0 {
		return nil, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("listing the manifests of %s: %w", tbl.Identifier(), err)
	}
	slices.SortFunc(manifests, func(a, b iceberg.ManifestFile) int { return cmp.Compare(b.SequenceNum(), a.SequenceNum()) })
	var paths []string
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData || len(paths) >= deadLetterScanFiles {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("reading manifest %s: %w", m.FilePath(), err)
		}
		slices.SortFunc(entries, func(a, b iceberg.ManifestEntry) int { return cmp.Compare(b.SequenceNum(), a.SequenceNum()) })
		for _, e := range entries {
			if len(paths) < deadLetterScanFiles {
				paths = append(paths, e.DataFile().FilePath())
			}
		}
	}
	var rows []DeadLetterRow
	for _, p := range paths {
		got, err := upsertsink.ReadColumns(ctx, fs, p, []string{ColTopic, ColPartition, ColOffset, ColTimestamp, ColError, ColValue})
		if err != nil {
			return nil, err
		}
		rows = append(rows, deadLetterRows(got)...)
		got.Release()
	}
	slices.SortFunc(rows, func(a, b DeadLetterRow) int {
		return cmp.Or(b.Timestamp.Compare(a.Timestamp), cmp.Compare(b.Offset, a.Offset))
	})
	return rows[:min(limit, len(rows))], nil
}

// deadLetterRows reads the columns (in LatestDeadLetters' order) of one
// file's rows.
func deadLetterRows(t arrow.Table) []DeadLetterRow {
	n := int(t.NumRows())
	out := make([]DeadLetterRow, n)
	for c := range 6 {
		chunks := t.Column(c).Data().Chunks()
		row := 0
		for _, ch := range chunks {
			for i := range ch.Len() {
				if !ch.IsNull(i) {
					setDeadLetterField(&out[row], c, ch, i)
				}
				row++
			}
		}
	}
	return out
}

func setDeadLetterField(r *DeadLetterRow, col int, a arrow.Array, i int) {
	switch col {
	case 0:
		r.Topic = a.ValueStr(i)
	case 1:
		if v, ok := a.(*array.Int32); ok {
			r.Partition = v.Value(i)
		}
	case 2:
		if v, ok := a.(*array.Int64); ok {
			r.Offset = v.Value(i)
		}
	case 3:
		if v, ok := a.(*array.Timestamp); ok {
			unit := v.DataType().(*arrow.TimestampType).Unit
			r.Timestamp = v.Value(i).ToTime(unit).UTC()
		}
	case 4:
		r.Error = a.ValueStr(i)
	case 5:
		var b []byte
		switch v := a.(type) {
		case *array.Binary:
			b = v.Value(i)
		case *array.String:
			b = []byte(v.Value(i))
		default:
			b = []byte(a.ValueStr(i))
		}
		r.ValueBytes = len(b)
		cut := b[:min(len(b), MaxDeadLetterValue)]
		if utf8.Valid(cut) || utf8.Valid(cut[:max(0, len(cut)-3)]) {
			r.Value = string([]rune(string(cut))) // a cut rune becomes U+FFFD
		} else {
			r.Value = fmt.Sprintf("%x", cut)
		}
		if len(b) > len(cut) {
			r.Value += "…"
		}
	}
}
