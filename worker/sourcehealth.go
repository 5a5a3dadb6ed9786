package worker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/source"
)

// sourceCheckEvery is how often the worker judges the brokers from what the
// readers saw (source.Health): a broker that stops answering shows within
// source.HungAfter plus this, and one that answers again within this.
const sourceCheckEvery = time.Second

// brokerProblem is the component of the node's and each table's problem
// about brokers that are down: one reason per table, however many of its
// partitions wait, instead of one per partition.
const brokerProblem = "kafka broker"

// sourceWatch is what the source-health loop remembers between checks.
type sourceWatch struct {
	down     map[string]source.BrokerHealth // by address
	affected map[string]bool                // table keys shown with brokerProblem
}

// watchSource judges the brokers every sourceCheckEvery until ctx ends.
func (w *Worker) watchSource(ctx context.Context) {
	sw := &sourceWatch{down: map[string]source.BrokerHealth{}, affected: map[string]bool{}}
	t := time.NewTicker(sourceCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.checkSource(sw, w.kafka.Health())
	}
}

// checkSource logs each broker going down (WARN) and coming back (INFO),
// shows the down ones as a node problem and, on every table with a
// partition read here that waits on one, as one table problem; and keeps
// each partition's leader and its last answer in the table's status.
func (w *Worker) checkSource(sw *sourceWatch, h source.Health) {
	now := time.Now()
	leads := map[string]int{}
	for _, b := range h.Leaders {
		leads[b.Addr]++
	}
	var statuses []status.BrokerStatus
	var downMsgs []string
	for _, b := range h.Brokers {
		statuses = append(statuses, status.BrokerStatus{Addr: b.Addr, NodeID: b.NodeID, Up: b.Up, Since: b.Since,
			LastResponse: b.LastResponse, Reason: b.Reason, Partitions: leads[b.Addr]})
		_, was := sw.down[b.Addr]
		switch {
		case !b.Up && !was:
			sw.down[b.Addr] = b
			w.log.Warn("kafka broker down", "broker", b.Addr, "broker_id", b.NodeID, "reason", b.Reason,
				"partitions_waiting", countWaiting(h.Waiting, b.Addr))
		case b.Up && was:
			w.log.Info("kafka broker answers again", "broker", b.Addr, "broker_id", b.NodeID,
				"down_for", now.Sub(sw.down[b.Addr].Since).Round(time.Second).String())
			delete(sw.down, b.Addr)
		}
		if !b.Up {
			downMsgs = append(downMsgs, describeBroker(b, now))
		}
	}
	// A broker no reader talks to any more is no longer judged: it is not
	// down as far as this node can tell.
	for addr, b := range sw.down {
		if !slices.ContainsFunc(h.Brokers, func(x source.BrokerHealth) bool { return x.Addr == addr }) {
			w.log.Info("kafka broker no longer read from", "broker", addr, "broker_id", b.NodeID)
			delete(sw.down, addr)
		}
	}
	w.status.SetBrokers(statuses)
	w.status.SetGlobal(brokerProblem, strings.Join(downMsgs, "; "))
	w.showWaiting(sw, h, now)
}

// showWaiting sets or clears each table's broker problem and records its
// partitions' leaders.
func (w *Worker) showWaiting(sw *sourceWatch, h source.Health, now time.Time) {
	byTable := map[string][]ledger.TopicPartition{}
	tables := map[string]bool{}
	w.mu.Lock()
	for tp := range h.Leaders {
		if r, ok := w.routes[tp.Topic]; ok {
			tables[r.spec.Key] = true
			if _, waits := h.Waiting[tp]; waits {
				byTable[r.spec.Key] = append(byTable[r.spec.Key], tp)
			}
		}
	}
	w.mu.Unlock()
	for key := range sw.affected {
		tables[key] = true
	}
	down := map[string]source.BrokerHealth{}
	for _, b := range h.Brokers {
		if !b.Up {
			down[b.Addr] = b
		}
	}
	for _, key := range slices.Sorted(maps.Keys(tables)) {
		msg := waitingMessage(byTable[key], h.Waiting, down, now)
		if msg == "" {
			delete(sw.affected, key)
		} else {
			sw.affected[key] = true
		}
		w.status.Update(key, ledger.DisplayName(key), func(t *status.TableStatus) {
			for _, ps := range t.Partitions {
				if b, ok := h.Leaders[ledger.TopicPartition{Topic: ps.Topic, Partition: ps.Partition}]; ok {
					ps.Leader, ps.LeaderAnsweredAt = b.Addr, b.LastResponse
				}
			}
			t.Problem(brokerProblem, msg)
		})
	}
}

// waitingMessage is a table's one reason: which of its partitions wait on
// which broker, and why that broker is down ("" when none waits).
func waitingMessage(tps []ledger.TopicPartition, waiting map[ledger.TopicPartition]string, down map[string]source.BrokerHealth, now time.Time) string {
	if len(tps) == 0 {
		return ""
	}
	byBroker := map[string][]string{}
	for _, tp := range tps {
		byBroker[waiting[tp]] = append(byBroker[waiting[tp]], tp.String())
	}
	var parts []string
	for _, addr := range slices.Sorted(maps.Keys(byBroker)) {
		names := byBroker[addr]
		slices.Sort(names)
		list := strings.Join(names, ", ")
		if len(names) > 3 {
			list = strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
		}
		noun := "partition"
		if len(names) > 1 {
			noun = "partitions"
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s) wait on %s", len(names), noun, list, describeBroker(down[addr], now)))
	}
	return strings.Join(parts, "; ")
}

// describeBroker names a down broker, for how long it has been down, and
// why.
func describeBroker(b source.BrokerHealth, now time.Time) string {
	id := ""
	if b.NodeID >= 0 {
		id = fmt.Sprintf(" (id %d)", b.NodeID)
	}
	return fmt.Sprintf("broker %s%s, down for %s: %s", b.Addr, id, now.Sub(b.Since).Truncate(time.Second), b.Reason)
}

func countWaiting(waiting map[ledger.TopicPartition]string, addr string) int {
	n := 0
	for _, a := range waiting {
		if a == addr {
			n++
		}
	}
	return n
}

// brokerDown reports whether any broker is judged down.
func brokerDown(h source.Health) bool {
	return slices.ContainsFunc(h.Brokers, func(b source.BrokerHealth) bool { return !b.Up })
}

// waitingTables are the tables with a partition read here that waits on a
// broker judged down.
func (w *Worker) waitingTables(h source.Health) map[string]bool {
	out := map[string]bool{}
	w.mu.Lock()
	defer w.mu.Unlock()
	for tp := range h.Waiting {
		if r, ok := w.routes[tp.Topic]; ok {
			out[r.spec.Key] = true
		}
	}
	return out
}
