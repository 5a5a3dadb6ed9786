package catalog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/iceberg-go/table"
)

// stampSnapshots sets the timestamp of each snapshot the updates add to
// now (stampClock: the committing node's wall clock, held back while it
// runs ahead), but never earlier than the newest time base carries (its
// last update, snapshot log and metadata log). Every commit through the
// catalog of record (Floe's own: its REST endpoint takes no writes) is
// stamped so.
//
// Why: iceberg-go stamps a snapshot with the producing process's clock,
// and it refuses, as Iceberg Java does, a snapshot more than a minute
// older than the table's newest entry. One snapshot stamped by a clock
// that ran ahead would make every later commit by a correct clock fail
// until real time caught up: a table stalled for as long as the step.
// Stamping here also keeps the logs ordered (readers search them for
// time travel). A committer whose own clock is behind is still refused by
// iceberg-go before its commit reaches the catalog, until its clock is
// right (docs/operations.md, Clock steps).
func stampSnapshots(base table.Metadata, updates []table.Update, now time.Time) (int64, error) {
	floor := newestMillis(base)
	ts := max(now.UnixMilli(), floor)
	for _, u := range updates {
		if u.Action() != table.UpdateAddSnapshot {
			continue
		}
		// The update's type is iceberg-go's own; its Snapshot field is
		// exported. A copy is stamped so the producer's value is untouched
		// when iceberg-go retries on fresher metadata.
		f := reflect.ValueOf(u)
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		if f.Kind() == reflect.Struct {
			f = f.FieldByName("Snapshot")
		}
		sn, ok := reflect.Value{}, false
		if f.IsValid() && f.CanSet() {
			sn, ok = f, f.Type() == reflect.TypeFor[*table.Snapshot]()
		}
		if !ok || sn.IsNil() {
			return 0, fmt.Errorf("stamping snapshot: unexpected add-snapshot update %T", u)
		}
		stamped := *sn.Interface().(*table.Snapshot)
		stamped.TimestampMs = ts
		sn.Set(reflect.ValueOf(&stamped))
	}
	return ts, nil
}

// stampSlack is how far iceberg-go's own reading of the clock may pass
// the stamp before restamp rewrites it: the two readings of one correct
// clock differ by the milliseconds between them.
const stampSlack = time.Second

// restamp caps the times iceberg-go itself wrote into md with its clock
// (last-updated-ms, and a snapshot-log entry when a commit moves the main
// branch without adding a snapshot, as snapshot expiry can) at ts, the
// stamp of this commit. They pass it only while the node's clock runs
// ahead of the stamp clock (a forward step): without the cap that commit
// would leave a future time in the table's logs, with the same stall as a
// future snapshot. The metadata goes through its JSON form, which is what
// is written anyway; with a correct clock nothing is rewritten.
func restamp(md table.Metadata, ts int64) (table.Metadata, error) {
	ahead := md.LastUpdatedMillis() > ts+stampSlack.Milliseconds()
	for e := range md.SnapshotLogs() {
		ahead = ahead || e.TimestampMs > ts+stampSlack.Milliseconds()
	}
	if !ahead {
		return md, nil
	}
	data, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("restamping metadata: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("restamping metadata: %w", err)
	}
	doc["last-updated-ms"], _ = json.Marshal(min(md.LastUpdatedMillis(), ts))
	if raw, ok := doc["snapshot-log"]; ok {
		var log []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &log); err != nil {
			return nil, fmt.Errorf("restamping the snapshot log: %w", err)
		}
		for _, e := range log {
			var at int64
			if json.Unmarshal(e["timestamp-ms"], &at) == nil && at > ts {
				e["timestamp-ms"], _ = json.Marshal(ts)
			}
		}
		doc["snapshot-log"], _ = json.Marshal(log)
	}
	if data, err = json.Marshal(doc); err != nil {
		return nil, fmt.Errorf("restamping metadata: %w", err)
	}
	return table.ParseMetadataBytes(data)
}

// newestMillis is the latest time base records: a snapshot stamped before
// it would leave the table's logs out of order.
func newestMillis(base table.Metadata) int64 {
	newest := base.LastUpdatedMillis()
	for e := range base.SnapshotLogs() {
		newest = max(newest, e.TimestampMs)
	}
	for e := range base.PreviousFiles() {
		newest = max(newest, e.TimestampMs)
	}
	for _, s := range base.Snapshots() {
		newest = max(newest, s.TimestampMs)
	}
	return newest
}
