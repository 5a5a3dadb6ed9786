package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/floe-io/floe/config"
	"github.com/floe-io/floe/schemas"
	"github.com/floe-io/floe/worker"
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
func (n *floeNode) wireDeadLetterTopics(cfg config.Config) error {
	need := false
	for _, t := range cfg.Tables {
		need = need || t.DeadLetterTopic != ""
	}
	if !need {
		return nil
	}
	w, err := worker.NewDeadLetterWriter(cfg.Kafka)
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

// Resume implements admin.Resumer: it restarts a table this node suspended
// at a bad record (past it with skip) or whose topic it paused at an
// incompatible schema.
func (n *floeNode) Resume(ctx context.Context, table string, skip bool) (any, error) {
	select {
	case <-n.started:
	default:
		return nil, errors.New("the node is still joining the raft group")
	}
	res, err := n.worker.Resume(ctx, table, skip)
	if err != nil {
		return nil, fmt.Errorf("resuming %s: %w", table, err)
	}
	return res, nil
}
