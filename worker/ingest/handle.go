package ingest

import (
	"context"
	"fmt"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
)

// verdict is what decoding made of a fetched record.
type verdict struct {
	err          error // the record is bad
	tombstone    bool  // a null value in a decoded format
	operatorSkip bool  // an operator resumed the table past it
	// stopped: the record is held (registry unavailable) or its topic
	// paused (incompatible schema); it is neither consumed nor buffered.
	stopped bool
}

// handle decodes one fetched record into the buffer. The record's budget
// charge (f.cost) moves with it into the buffer, or is released here when
// the record is not buffered.
func (p *Pipeline) handle(ctx context.Context, f fetched) {
	ps, ok := p.parts[f.tp]
	if !ok || ps.gen != f.gen || p.suspended || f.msg.Offset < ps.next {
		p.n.mem.release(f.cost)
		return // from a stopped fetcher, or already consumed
	}
	if f.msg.Control {
		p.n.mem.release(f.cost)
		p.passed(f, ps)
		p.caughtUp(ctx, ps)
		return
	}
	m := f.msg
	rec := &records.Record{Topic: f.tp.Topic, Partition: f.tp.Partition, Offset: m.Offset, Timestamp: m.Time, Key: m.Key, Headers: m.Headers}
	v := p.decode(ctx, f, rec)
	if f.fits && rec.Value != nil {
		// Checked against columns that changed before it got here, so
		// decoded after all: its charge grows to a decoded value's,
		// without waiting (this goroutine frees the budget).
		full := RecordCost(p.spec.Format, m)
		p.n.mem.take(full - f.cost)
		f.cost = full
	}
	if v.stopped {
		if p.held == nil { // a paused topic; a held record keeps its charge
			p.n.mem.release(f.cost)
		}
		return
	}
	size := rec.Size() + int64(len(m.Value))
	rec, suspended := p.route(ctx, f, rec, v)
	if suspended {
		p.n.mem.release(f.cost)
		return
	}
	if rec != nil {
		rec.Mem = f.cost
		p.bytes += size
		p.addCharged(f.cost)
	} else {
		p.n.mem.release(f.cost)
	}
	p.consumed(f, ps)
	if p.bytes >= int64(p.n.Config.TargetFileSize) || p.tombs >= ledger.MaxTombstones {
		p.noteFlushForSpace(len(p.buf) + len(p.dlq))
		p.flush(ctx, false)
	}
	p.caughtUp(ctx, ps)
}

// decode decodes a fetched record's value into rec per the table's format.
func (p *Pipeline) decode(ctx context.Context, f fetched, rec *records.Record) verdict {
	m := f.msg
	switch {
	case p.operatorSkip(f.tp, m.Offset):
		// A record an operator resumed the table past (replicated, so
		// whichever node fetches it skips it until the table commits past).
		return verdict{operatorSkip: true}
	case p.spec.Format == "raw" && len(m.Value) == 0 && p.upsertByKafkaKey():
		return verdict{tombstone: true}
	case p.spec.Format == "raw":
		rec.Raw = m.Value
	case len(m.Value) == 0:
		return verdict{tombstone: true}
	case p.spec.Format == "json" && f.fits && f.preVer == p.shapeVer:
		rec.JSON = m.Value // checked by the fetcher against these very columns
	case p.spec.Format == "json":
		v, changed, err := decodeJSONChanged(p.shape, m.Value, p.limits())
		if err != nil {
			return verdict{err: err}
		}
		if changed {
			p.publishShape() // pre-decoded values of the old columns are redone
		}
		rec.Value = v
	default:
		switch out, err := p.decodeSchema(ctx, f.tp, m, f.pre, rec); out {
		case held:
			p.hold(f, err)
			return verdict{stopped: true}
		case paused:
			p.pauseTopic(ctx, f.tp, m.Offset, err)
			return verdict{stopped: true}
		default:
			return verdict{err: err}
		}
	}
	return verdict{}
}

// route puts a decoded record where the mapping says: the buffer, the
// dead letters, or nowhere (skipped, ignored tombstone; rec comes back
// nil). suspended: the record suspended the table.
func (p *Pipeline) route(ctx context.Context, f fetched, rec *records.Record, v verdict) (_ *records.Record, suspended bool) {
	m := f.msg
	switch {
	case v.tombstone && p.upsertByKafkaKey():
		// Deletes its key: buffered as a row that its commit deletes
		// together with the key's previous row (upsert.go).
		rec.Tombstone = true
		p.buf = append(p.buf, rec)
		p.tombs++
		p.status(func(t *status.TableStatus) { t.Tombstones++ })
	case v.tombstone && p.mapping.Tombstones == "dlq":
		rec.Err = "tombstone: the record's value is null"
		p.dlq = append(p.dlq, rec)
		p.status(func(t *status.TableStatus) {
			t.Tombstones++
			t.DeadLettered++
			t.AddDeadLetter(f.tp.Topic, f.tp.Partition, m.Offset, rec.Err)
		})
	case v.tombstone:
		p.status(func(t *status.TableStatus) { t.Tombstones++ })
		return nil, false
	case v.operatorSkip:
		p.log.Info("skipping a record the table was resumed past", "partition", f.tp.String(), "offset", m.Offset)
		p.status(func(t *status.TableStatus) { t.Skipped++ })
		return nil, false
	case v.err != nil:
		switch p.mapping.ErrorMode {
		case "skip":
			p.log.Debug("skipping bad record", "partition", f.tp.String(), "offset", m.Offset, "err", v.err)
			p.status(func(t *status.TableStatus) { t.Skipped++ })
			return nil, false
		case "suspend":
			p.suspend(ctx, f.tp, m.Offset, v.err)
			return nil, true
		default: // log (dlq)
			rec.Raw, rec.Err, rec.Value = m.Value, v.err.Error(), nil
			p.dlq = append(p.dlq, rec)
			p.status(func(t *status.TableStatus) {
				t.DeadLettered++
				t.AddDeadLetter(f.tp.Topic, f.tp.Partition, m.Offset, rec.Err)
			})
		}
	default:
		p.buf = append(p.buf, rec)
	}
	return rec, false
}

// consumed advances the partition past a handled record and counts it;
// the count reaches status with the burst's (burst.go): this runs for
// every record.
func (p *Pipeline) consumed(f fetched, ps *partState) {
	m := f.msg
	ps.next = m.Offset + 1
	ps.hw = max(ps.hw, m.HighWatermark)
	ps.meter.add(int64(len(m.Key) + len(m.Value)))
	if ms := m.Time.UnixMilli(); ms > p.maxTS {
		p.maxTS = ms
	}
	ps.maxTS = max(ps.maxTS, m.Time.UnixMilli())
	p.noteConsumed(ps, int64(len(m.Key)+len(m.Value)))
}

// passed advances the partition past a transaction's commit or abort
// marker: it holds no record, but the next range covers its offset (and
// the aborted records before an abort marker, which the reader skipped),
// so the ledger stays contiguous and the partition reaches its end.
func (p *Pipeline) passed(f fetched, ps *partState) {
	ps.next = f.msg.Offset + 1
	ps.hw = max(ps.hw, f.msg.HighWatermark)
	p.status(func(t *status.TableStatus) {
		if s, ok := t.Partitions[f.tp.String()]; ok {
			s.Fetched = ps.next
			s.HighWatermark = max(s.HighWatermark, f.msg.HighWatermark)
		}
	})
}

// SuspendReason is the reason of a table suspended at a bad record. It
// says how to go on: a plain resume decodes the same record again and
// stops at it again, so the way past is resume --skip (or fixing what the
// record needs, such as the registry's schema, then a plain resume).
func SuspendReason(table string, tp ledger.TopicPartition, offset int64, err error) string {
	return fmt.Sprintf("bad record at %s offset %d: %v; skip it with `floe ctl tables resume %s --skip` (a plain resume stops at it again)",
		tp, offset, err, table)
}

// suspend stops the table at a bad record: what came before it is flushed,
// nothing after it is consumed until an operator intervenes.
func (p *Pipeline) suspend(ctx context.Context, tp ledger.TopicPartition, offset int64, err error) {
	p.flush(ctx, true)
	p.suspended = true
	p.suspendedAt = &ledger.Range{TopicPartition: tp, From: offset, To: offset + 1}
	p.stopAll()
	p.noteHeld()
	reason := SuspendReason(ledger.DisplayName(p.spec.Key), tp, offset, err)
	p.log.Error("table suspended", "reason", reason)
	p.status(func(t *status.TableStatus) {
		t.State, t.Reason = status.StateSuspended, reason
		t.SuspendedAt = &status.SuspendedRecord{Topic: tp.Topic, Partition: tp.Partition, Offset: offset, Error: err.Error()}
	})
}
