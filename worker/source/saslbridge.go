package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	kafkasasl "github.com/segmentio/kafka-go/sasl"
	"github.com/twmb/franz-go/pkg/sasl"
)

// kafkaGoSASL presents a franz-go SASL mechanism to kafka-go, so the two
// clients of a node share one implementation of a mechanism (AWS_MSK_IAM:
// one signer, one payload format). kafka-go puts the broker's host and
// port in the context of Start (sasl.WithMetadata); franz-go's
// Authenticate takes them as "host:port".
type kafkaGoSASL struct{ m sasl.Mechanism }

func (k kafkaGoSASL) Name() string { return k.m.Name() }

func (k kafkaGoSASL) Start(ctx context.Context) (kafkasasl.StateMachine, []byte, error) {
	md := kafkasasl.MetadataFromContext(ctx)
	if md == nil {
		return nil, nil, errors.New("kafka-go SASL: no broker address in the context")
	}
	sess, first, err := k.m.Authenticate(ctx, net.JoinHostPort(md.Host, strconv.Itoa(md.Port)))
	if err != nil {
		return nil, nil, fmt.Errorf("SASL %s with %s: %w", k.m.Name(), md.Host, err)
	}
	return kafkaGoSession{sess}, first, nil
}

// kafkaGoSession is a franz-go session as a kafka-go state machine; both
// answer a server message with (done, next message).
type kafkaGoSession struct{ s sasl.Session }

func (k kafkaGoSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	return k.s.Challenge(challenge)
}
