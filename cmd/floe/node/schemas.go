package node

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/floe-io/floe/cluster/fsm"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/worker/source"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/worker/schemas"
)

// newSchemaDecoder wires the Schema Registry client into the decoder the
// worker uses for the avro, protobuf, json_schema and latest formats.
func newSchemaDecoder(c config.SchemaRegistry) *schemas.Decoder {
	return schemas.NewDecoder(schemas.NewRegistry(schemas.RegistryConfig{
		URL: c.URL, Username: c.Username, Password: c.Password, BearerToken: c.BearerToken,
		Timeout: c.Timeout.D(), RefreshInterval: c.RefreshInterval.D(),
	}))
}

// wireDeadLetterTopics gives the worker a producer when a mapping names a
// dead_letter_topic; it is closed when the node stops.
func (n *Node) wireDeadLetterTopics(cfg config.Config) error {
	need := false
	for _, t := range cfg.Tables {
		need = need || t.DeadLetterTopic != ""
	}
	if !need {
		return nil
	}
	w, err := source.NewDeadLetterWriter(cfg.Kafka)
	if err != nil {
		return fmt.Errorf("dead-letter topics: %w", err)
	}
	n.worker.SetDeadLetterProducer(w)
	go func() {
		<-n.done
		_ = w.Close()
	}()
	return nil
}

// suspendedElsewhere asks the other members' admin endpoints where they
// have the table suspended. Members that do not answer in time are left out.
func (n *Node) suspendedElsewhere(ctx context.Context, table string) []status.SuspendedRecord {
	var addrs []string
	n.raft.FSM().Read(func(s *fsm.State) {
		for id, m := range s.Nodes {
			if id != n.cfg.Node.ID && m.Admin != "" {
				addrs = append(addrs, m.Admin)
			}
		}
	})
	var (
		mu  sync.Mutex
		out []status.SuspendedRecord
		wg  sync.WaitGroup
	)
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			rep, err := n.peers.fetch(fctx, addr) // adminwire.go
			if err != nil {
				n.log.Warn("resume: reading a member's status", "admin", addr, "err", err)
				return
			}
			for _, tr := range rep.Tables {
				if at := tr.SuspendedAt; at != nil && tr.Table == table {
					mu.Lock()
					out = append(out, status.SuspendedRecord{Topic: at.Topic, Partition: at.Partition, Offset: at.Offset, Error: at.Error})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return out
}
