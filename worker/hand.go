package worker

import (
	"maps"
	"reflect"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/worker/control"
)

// handed is what reconcile hands a pipeline from the replicated state: its
// assigned partitions, its table's resume and its operator control.
type handed struct {
	assign    map[ledger.TopicPartition]uint64
	resumeGen uint64
	skips     map[ledger.TopicPartition]int64
	control   control.TableControl
}

// handee is the part of a pipeline reconcile hands news to.
type handee interface {
	SetAssignment(want map[ledger.TopicPartition]uint64)
	SetResume(gen uint64, skips map[ledger.TopicPartition]int64)
	SetControl(c control.TableControl)
}

// hand gives p what changed in now since last (everything when last is
// nil) and returns now, to pass as last next time. Reconcile runs at every
// applied entry, whatever table it concerns; handing a pipeline only what
// changed keeps the entries of other tables from waking it. News equal to
// what a pipeline has changes nothing in it: partitions it could not
// start yet it retries on its own ticker.
func hand(p handee, last *handed, now handed) *handed {
	if last == nil || !maps.Equal(last.assign, now.assign) {
		p.SetAssignment(now.assign)
	}
	if last == nil || last.resumeGen != now.resumeGen || !maps.Equal(last.skips, now.skips) {
		p.SetResume(now.resumeGen, now.skips)
	}
	if last == nil || !reflect.DeepEqual(last.control, now.control) {
		p.SetControl(now.control)
	}
	return &now
}
