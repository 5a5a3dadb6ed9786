package catalog

import (
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
func stampSnapshots(base table.Metadata, updates []table.Update, now time.Time) error {
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
			return fmt.Errorf("stamping snapshot: unexpected add-snapshot update %T", u)
		}
		stamped := *sn.Interface().(*table.Snapshot)
		stamped.TimestampMs = ts
		sn.Set(reflect.ValueOf(&stamped))
	}
	return nil
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
