package source

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/testing/brokerhang"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestJudge walks one broker's state through the cases of judge on a fake
// clock.
func TestJudge(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	meta := kgo.BrokerMetadata{NodeID: 1, Host: "b1", Port: 9092}
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name     string
		steps    func(h *healthTracker, at func(time.Duration))
		needed   bool
		judgeAt  time.Duration
		wantUp   bool
		wantText string
	}{
		{"answered", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 1, 10, 0, 0, nil)
			at(time.Second)
			h.OnBrokerE2E(meta, 1, kgo.BrokerE2E{})
		}, true, time.Minute, true, ""},
		{"silent past HungAfter", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 1, 10, 0, 0, nil)
		}, true, HungAfter, false, "no answer to fetches for 10s"},
		{"fetches stuck while metadata is answered (a stuck disk)", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 1, 10, 0, 0, nil)
			at(5 * time.Second)
			h.OnBrokerWrite(meta, 3, 10, 0, 0, nil)
			h.OnBrokerE2E(meta, 3, kgo.BrokerE2E{})
		}, true, HungAfter, false, "no answer to fetches for 10s"},
		{"metadata unanswered", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 3, 10, 0, 0, nil)
		}, true, HungAfter, false, "no answer for 10s"},
		{"silent, not yet HungAfter", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 1, 10, 0, 0, nil)
		}, true, HungAfter - time.Second, true, ""},
		{"silent but leads nothing read here", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 1, 10, 0, 0, nil)
		}, false, time.Hour, true, ""},
		{"a read timeout and a reconnect do not restart the wait", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerWrite(meta, 1, 10, 0, 0, nil)
			at(8 * time.Second)
			h.OnBrokerE2E(meta, 1, kgo.BrokerE2E{ReadErr: &net.OpError{Op: "read", Err: errors.New("i/o timeout")}})
			h.OnBrokerWrite(meta, 18, 10, 0, 0, nil)
		}, true, HungAfter, false, "last error: reading a response"},
		{"refused for ErrorsFor", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerConnect(meta, 0, nil, refused)
			at(ErrorsFor)
			h.OnBrokerConnect(meta, 0, nil, refused)
		}, false, ErrorsFor, false, "connecting: dial: connection refused"},
		{"one error healed by an answer", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerConnect(meta, 0, nil, refused)
			at(time.Second)
			h.OnBrokerE2E(meta, 18, kgo.BrokerE2E{})
		}, true, time.Minute, true, ""},
		{"errors forgotten after ForgetAfter", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerConnect(meta, 0, nil, refused)
			at(ErrorsFor)
			h.OnBrokerConnect(meta, 0, nil, refused)
		}, false, ErrorsFor + ForgetAfter, true, ""},
		{"a closing client is no error", func(h *healthTracker, at func(time.Duration)) {
			h.OnBrokerE2E(meta, 18, kgo.BrokerE2E{})
			h.OnBrokerE2E(meta, 1, kgo.BrokerE2E{ReadErr: kgo.ErrClientClosed})
			at(time.Minute)
			h.OnBrokerE2E(meta, 1, kgo.BrokerE2E{ReadErr: context.Canceled})
		}, false, time.Minute + ErrorsFor, true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := t0
			h := newHealthTracker()
			h.now = func() time.Time { return now }
			c.steps(h, func(d time.Duration) { now = t0.Add(d) })
			now = t0.Add(c.judgeAt)
			bs := h.brokers(map[string]bool{"b1:9092": c.needed})
			if len(bs) != 1 {
				t.Fatalf("brokers: %+v", bs)
			}
			b := bs[0]
			if b.Up != c.wantUp || (c.wantText != "" && !strings.Contains(b.Reason, c.wantText)) || (c.wantUp && b.Reason != "") {
				t.Fatalf("judged %+v, want up=%v with %q", b, c.wantUp, c.wantText)
			}
			if b.NodeID != 1 || b.Addr != "b1:9092" {
				t.Fatalf("broker named %q id %d", b.Addr, b.NodeID)
			}
		})
	}
}

// TestHungBrokerShows hangs a kfake broker (it takes every request and
// answers none, as a SIGSTOPped process does) under a reader and checks
// that the broker is judged down with the partition waiting on it, then up
// again soon after it answers.
func TestHungBrokerShows(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for HungAfter")
	}
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "h"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	hang := brokerhang.Install(kc) // as a SIGSTOPped broker hangs
	k, err := NewKafkaClient(config.Kafka{BootstrapServers: kc.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	tp := ledger.TopicPartition{Topic: "h", Partition: 0}
	r := k.NewReader(tp, 0, 1<<20, nil)
	defer r.Close()
	wait.For(t, 20*time.Second, "the leader known and answering", func() bool {
		h := k.Health()
		return len(h.Leaders) == 1 && !h.Leaders[tp].LastResponse.IsZero() && len(h.Waiting) == 0
	})
	hang.Stop()
	start := time.Now()
	wait.For(t, 30*time.Second, "the hung broker judged down", func() bool {
		h := k.Health()
		return h.Waiting[tp] != "" && len(h.Brokers) > 0 && !h.Brokers[0].Up
	})
	t.Logf("down after %s: %+v", time.Since(start).Round(time.Second), k.Health().Brokers)
	hang.Resume()
	start = time.Now()
	wait.For(t, 30*time.Second, "the broker up again", func() bool {
		h := k.Health()
		return len(h.Waiting) == 0 && len(h.Brokers) > 0 && h.Brokers[0].Up
	})
	t.Logf("up again after %s", time.Since(start).Round(100*time.Millisecond))
}

// TestRefusedBrokerShows closes the broker under a reader: its connections
// are refused, and after ErrorsFor it is judged down with that error.
func TestRefusedBrokerShows(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for ErrorsFor")
	}
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "r"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKafkaClient(config.Kafka{BootstrapServers: kc.ListenAddrs()})
	if err != nil {
		t.Fatal(err)
	}
	tp := ledger.TopicPartition{Topic: "r", Partition: 0}
	r := k.NewReader(tp, 0, 1<<20, nil)
	defer r.Close()
	wait.For(t, 20*time.Second, "the leader known and answering", func() bool {
		h := k.Health()
		return len(h.Leaders) == 1 && !h.Leaders[tp].LastResponse.IsZero()
	})
	kc.Close()
	wait.For(t, 30*time.Second, "the closed broker judged down as refused", func() bool {
		h := k.Health()
		return h.Waiting[tp] != "" && len(h.Brokers) > 0 && !h.Brokers[0].Up && strings.Contains(h.Brokers[0].Reason, "refused")
	})
}

// TestTLSMismatchShows: a client that speaks TLS to a plaintext listener
// never completes its handshake (the broker waits for a Kafka frame); its
// bootstrap broker, never known by id, is judged down once the dial times
// out and its errors last ErrorsFor.
func TestTLSMismatchShows(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for ErrorsFor")
	}
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "tls"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	k, err := NewKafkaClient(config.Kafka{BootstrapServers: kc.ListenAddrs(), TLS: config.TLS{Enabled: true, InsecureSkipVerify: true}})
	if err != nil {
		t.Fatal(err)
	}
	r := k.NewReader(ledger.TopicPartition{Topic: "tls", Partition: 0}, 0, 1<<20, nil)
	defer r.Close()
	wait.For(t, 30*time.Second, "the broker judged down as its TLS handshake times out", func() bool {
		h := k.Health()
		return len(h.Brokers) == 1 && !h.Brokers[0].Up && h.Brokers[0].NodeID == -1 && strings.HasPrefix(h.Brokers[0].Reason, "connecting: ")
	})
}

// TestUnresolvableBrokerShows: a bootstrap server whose name does not
// resolve is judged down within ErrorsFor of its first error, with it.
func TestUnresolvableBrokerShows(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for ErrorsFor")
	}
	t.Parallel()
	k, err := NewKafkaClient(config.Kafka{BootstrapServers: []string{"broker.floe-test.invalid:9092"}})
	if err != nil {
		t.Fatal(err)
	}
	r := k.NewReader(ledger.TopicPartition{Topic: "dns", Partition: 0}, 0, 1<<20, nil)
	defer r.Close()
	wait.For(t, 30*time.Second, "the broker judged down as unresolvable", func() bool {
		b := k.Health().Brokers
		return len(b) == 1 && !b[0].Up && strings.Contains(b[0].Reason, "no such host")
	})
}
