package source

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TestKafkaGoSASLBridge: kafka-go authenticates through a franz-go
// mechanism presented by kafkaGoSASL, here SCRAM-SHA-512 (two round trips
// after the first message) against kfake, and a wrong password is refused.
func TestKafkaGoSASLBridge(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "floe", "right"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cases := []struct {
		name, pass string
		ok         bool
	}{
		{"right password", "right", true},
		{"wrong password", "wrong", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mech := kafkaGoSASL{scram.Auth{User: "floe", Pass: tc.pass}.AsSha512Mechanism()}
			tr := &kafka.Transport{SASL: mech}
			defer tr.CloseIdleConnections()
			cl := &kafka.Client{Addr: kafka.TCP(c.ListenAddrs()...), Timeout: 5 * time.Second, Transport: tr}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := cl.Metadata(ctx, &kafka.MetadataRequest{})
			if tc.ok && err != nil {
				t.Fatalf("metadata through the bridge: %v", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("wrong password accepted")
			}
		})
	}
}
