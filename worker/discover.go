package worker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/internal/retry"
)

// discover lists topics periodically, routes them to tables and registers
// the sources so the assignment controller can place their partitions.
func (w *Worker) discover(ctx context.Context) {
	b := retry.New()
	var registered []Source
	for {
		wait := w.cfg.DiscoveryInterval
		if err := w.discoverOnce(ctx, &registered); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.log.Warn("discovering topics", "err", err)
			wait = b.Next()
		} else {
			b.Reset()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-w.rediscover: // a mapping was created, changed or deleted
			t.Stop()
		}
	}
}

func (w *Worker) discoverOnce(ctx context.Context, registered *[]Source) error {
	topics, err := w.kafka.Topics(ctx)
	if err != nil {
		// When the readers already judged a broker down, the source
		// health's one problem names it (sourcehealth.go); listing topics
		// failing is that same outage, not a second reason.
		h := w.kafka.Health()
		global := err.Error()
		if brokerDown(h) {
			global = ""
		}
		w.status.SetGlobal("kafka", global)
		waiting := w.waitingTables(h)
		w.forEachMapped(func(key string, t *status.TableStatus) {
			if waiting[key] {
				t.Problem("kafka", "")
			} else {
				t.Problem("kafka", err.Error())
			}
		})
		return err
	}
	w.status.SetGlobal("kafka", "")
	var sources []Source
	routes := map[string]route{}
	var unnamed []error
	for _, topic := range slices.Sorted(maps.Keys(topics)) {
		r, ok, err := w.resolveTopic(topic)
		if err != nil {
			unnamed = append(unnamed, err)
		}
		if !ok {
			continue
		}
		routes[topic] = r
	}
	w.reportNaming(unnamed)
	w.collisions(routes)
	for _, topic := range slices.Sorted(maps.Keys(routes)) {
		sources = append(sources, Source{Topic: topic, Table: routes[topic].spec.Key, Partitions: topics[topic]})
	}
	// A mapping that names a topic that does not exist is shown, not fatal:
	// the topic may be created later.
	mapped := map[string]bool{}
	for _, r := range routes {
		mapped[r.spec.Key] = true
	}
	for _, ref := range w.mappingList() {
		t := ref.t
		if t.Topic == "" {
			continue
		}
		r, _ := w.resolve(t.Topic)
		mapped[r.spec.Key] = true
		msg := ""
		if _, ok := topics[t.Topic]; !ok {
			msg = fmt.Sprintf("topic %s not found", t.Topic)
		}
		w.status.Update(r.spec.Key, ledger.DisplayName(r.spec.Key), func(ts *status.TableStatus) { ts.Problem("kafka", msg) })
	}
	for _, r := range routes {
		if _, ok := topics[r.mapping.Topic]; r.mapping.Topic == "" || ok {
			w.status.Update(r.spec.Key, ledger.DisplayName(r.spec.Key), func(ts *status.TableStatus) { ts.Problem("kafka", "") })
		}
	}
	w.setRoutes(routes, mapped)
	if !slices.Equal(sources, *registered) {
		if err := w.prop.RegisterSources(ctx, sources); err != nil {
			return fmt.Errorf("registering sources: %w", err)
		}
		*registered = sources
	}
	w.refreshWatermarks(ctx, routes)
	return nil
}

func (w *Worker) forEachMapped(fn func(key string, t *status.TableStatus)) {
	w.mu.Lock()
	keys := map[string]bool{}
	for _, r := range w.routes {
		keys[r.spec.Key] = true
	}
	w.mu.Unlock()
	for _, ref := range w.mappingList() {
		if t := ref.t; t.Topic != "" {
			r, _ := w.resolve(t.Topic)
			keys[r.spec.Key] = true
		}
	}
	for k := range keys {
		w.status.Update(k, ledger.DisplayName(k), func(t *status.TableStatus) { fn(k, t) })
	}
}

// refreshWatermarks updates the high watermarks of assigned partitions so
// lag shows even when a partition is idle or its fetcher is stuck.
func (w *Worker) refreshWatermarks(ctx context.Context, routes map[string]route) {
	byTopic := map[string][]int32{}
	for tp := range w.state.Assigned(w.cfg.NodeID) {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], tp.Partition)
	}
	for topic, parts := range byTopic {
		r, ok := routes[topic]
		if !ok {
			continue
		}
		start := time.Now()
		hw, err := w.kafka.Offsets(ctx, topic, parts, true)
		if err != nil {
			w.log.Debug("reading high watermarks", "topic", topic, "err", err)
		}
		w.status.Update(r.spec.Key, ledger.DisplayName(r.spec.Key), func(t *status.TableStatus) {
			for p, off := range hw {
				key := ledger.TopicPartition{Topic: topic, Partition: p}.String()
				if ps, ok := t.Partitions[key]; ok {
					ps.HighWatermark = max(ps.HighWatermark, off)
					// The broker answers for this partition and the reader
					// has not failed again for a whole interval: its last
					// error was transient (kafka-go retried it).
					if ps.LastError != "" && ps.LastErrorAt.Before(start.Add(-w.cfg.DiscoveryInterval)) {
						ps.LastError, ps.ErrorSince = "", time.Time{}
						t.Problem("kafka "+key, "")
					}
				}
			}
		})
	}
}
