package node

import (
	"fmt"

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
