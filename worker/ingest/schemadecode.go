package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/internal/retry"
	"github.com/floe-io/floe/worker/source"
)

// outcome is what became of a fetched record.
type outcome uint8

const (
	decoded outcome = iota // decoded, or a bad record (with its error)
	held                   // a transient failure: retry the same record later
	paused                 // the schema is incompatible: the topic pauses
)

// Status components of registry problems.
const (
	problemRegistry = "schema registry"
	problemSchema   = "config schema " // + topic: CONFIG_ISSUE
)

// decodeSchema decodes a record of a registry format into rec, or takes
// what its fetcher decoded (pre, nil when it did not). A bad record returns
// its error with outcome decoded; a registry failure returns held; an
// incompatible schema returns paused.
func (p *Pipeline) decodeSchema(ctx context.Context, tp ledger.TopicPartition, m source.Message, pre *preDecoded, rec *records.Record) (outcome, error) {
	d, kd, keyOK := records.Decoded{}, records.Decoded{}, false
	if pre != nil {
		d, kd, keyOK = pre.value, pre.key, pre.keyOK
	} else {
		var out outcome
		var err error
		if d, kd, keyOK, out, err = p.decodeHere(ctx, tp, m); err != nil {
			return out, err
		}
	}
	if p.schemas == nil {
		p.schemas = map[int]bool{}
	}
	if !p.schemas[d.SchemaID] {
		if out, err := p.follow(d.Shape, d.SchemaID, d.SchemaID, ""); err != nil {
			return out, err
		}
	}
	if keyOK && !p.schemas[-kd.SchemaID] {
		key := &records.Shape{Kind: records.Struct, Fields: []*records.Field{{Name: records.KeyDecodedColumn, Shape: kd.Shape}}}
		// keys' ids kept apart from values'
		if out, err := p.follow(key, kd.SchemaID, -kd.SchemaID, "key: "); err != nil {
			return out, err
		}
	}
	rec.Value = d.Value
	if keyOK {
		rec.Value[records.KeyDecodedColumn] = kd.Value
	}
	if p.registryDown {
		p.registryDown = false
		p.status(func(t *status.TableStatus) { t.Problem(problemRegistry, "") })
	}
	return decoded, nil
}

// decodeHere decodes a registry-format value and key on the pipeline
// goroutine, calling the registry when the decoder needs it.
func (p *Pipeline) decodeHere(ctx context.Context, tp ledger.TopicPartition, m source.Message) (d, kd records.Decoded, keyOK bool, _ outcome, _ error) {
	dec := p.n.Schemas
	if dec == nil {
		return d, kd, false, held, errors.New("no schema registry is configured (schema_registry.url)")
	}
	subject := ""
	if p.spec.Format == "latest" { // the only format that looks a subject up
		subject = config.SubjectFor(p.mapping.Subject, tp.Topic)
	}
	d, err := dec.Value(ctx, p.spec.Format, subject, m.Value)
	if errors.Is(err, records.ErrBadRecord) {
		return d, kd, false, decoded, err
	}
	if err != nil {
		return d, kd, false, held, err
	}
	if len(m.Key) > 0 {
		if kd, keyOK, err = dec.Key(ctx, m.Key); err != nil {
			return d, kd, false, held, err
		}
	}
	return d, kd, keyOK, decoded, nil
}

// follow evolves the table's shape by a schema seen for the first time
// (kept in p.schemas under key). A schema that would take the table past
// its limits (nesting, columns, column names) is refused, remembered, and
// every record of it is bad; one the table cannot follow pauses the topic.
func (p *Pipeline) follow(schema *records.Shape, id, key int, what string) (outcome, error) {
	if err := p.schemaLimits[key]; err != nil {
		return decoded, err
	}
	next := p.shape.Clone()
	if err := evolve(next, schema, id); err != nil {
		return paused, fmt.Errorf("%s%w", what, err)
	}
	if err := p.overLimits(next, schema); err != nil {
		err = fmt.Errorf("%sschema id %d: %w", what, id, err)
		if p.schemaLimits == nil {
			p.schemaLimits = map[int]error{}
		}
		p.schemaLimits[key] = err
		return decoded, err
	}
	*p.shape = *next
	p.schemas[key] = true
	return decoded, nil
}

// overLimits checks the table's shape as schema would make it. A table
// made before the limits may already break them (columns A and a from an
// older schema): it may still follow a schema that keeps them by itself,
// or it could never evolve again.
func (p *Pipeline) overLimits(next, schema *records.Shape) error {
	lim := p.limits()
	err := lim.Check(next, 0, "")
	if err == nil || lim.Check(p.shape, 0, "") == nil {
		return err
	}
	return lim.Check(schema, 0, "")
}

// hold keeps a record whose decoding failed for a reason outside it (the
// registry down or slow): nothing more is consumed until it decodes, which
// is retried with backoff, and the table shows DEGRADED meanwhile.
func (p *Pipeline) hold(f fetched, err error) {
	if p.holdBackoff == nil {
		p.holdBackoff = retry.New()
	}
	p.held = &f
	p.heldUntil = time.Now().Add(p.holdBackoff.Next())
	p.registryDown = true
	p.log.Warn("record held: schema registry unavailable", "partition", f.tp.String(), "offset", f.msg.Offset, "err", err)
	p.status(func(t *status.TableStatus) { t.Problem(problemRegistry, err.Error()) })
}

// retryHeld handles the held record again once its backoff has passed.
func (p *Pipeline) retryHeld(ctx context.Context) {
	if p.held == nil || time.Now().Before(p.heldUntil) {
		return
	}
	f := *p.held
	p.held = nil
	p.handle(ctx, f)
	p.publishConsumed()
	if p.held == nil {
		p.holdBackoff = nil
	}
}

// pauseTopic stops a topic whose latest schema the table cannot follow:
// what was consumed before the record is flushed and recorded, the topic's
// partitions stop, and the table shows CONFIG_ISSUE with the reason until
// an operator resumes it (after evolving the table by hand or resetting
// the topic). Other topics of the table go on.
func (p *Pipeline) pauseTopic(ctx context.Context, tp ledger.TopicPartition, offset int64, err error) {
	reason := fmt.Sprintf("%s partition %d offset %d: %v", tp.Topic, tp.Partition, offset, err)
	if p.pausedTopics == nil {
		p.pausedTopics = map[string]string{}
	}
	p.pausedTopics[tp.Topic] = reason
	p.flush(ctx, true)
	for k, ps := range p.parts {
		if k.Topic == tp.Topic {
			p.stopPartition(ps)
			p.dropBuffered(k)
			delete(p.parts, k)
		}
	}
	p.noteHeld()
	p.log.Error("topic paused: incompatible schema", "topic", tp.Topic, "reason", reason)
	p.status(func(t *status.TableStatus) { t.Problem(problemSchema+tp.Topic, reason) })
}
