package floebench

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestValidCache(t *testing.T) {
	for _, tc := range []struct {
		mode string
		ok   bool
	}{{"warm", true}, {"cold", true}, {"as-is", true}, {"", false}, {"hot", false}, {"Warm", false}} {
		if err := validCache(tc.mode); (err == nil) != tc.ok {
			t.Errorf("validCache(%q) = %v, want ok %v", tc.mode, err, tc.ok)
		} else if err != nil && !strings.Contains(err.Error(), "--broker-cache") {
			t.Errorf("validCache(%q): %v does not name the flag", tc.mode, err)
		}
	}
}

// TestReadTopicToEnds: the warm-up reads every record below the ends of
// every partition, an empty partition included, and then stops.
func TestReadTopicToEnds(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "warm"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	kb := &kafkaBench{brokers: strings.Join(kc.ListenAddrs(), ",")}
	cl, err := kb.client(kgo.DefaultProduceTopic("warm"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := map[int32]int64{0: 500, 1: 1, 2: 0, 3: 1200}
	for p, n := range want {
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := kb.readTopic(ctx, "warm", want)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1701 {
		t.Fatalf("read %d records, want 1701", n)
	}
	kb.cache = cacheWarm
	msg, err := kb.prepareCache(ctx, "warm", want)
	if err != nil || !strings.Contains(msg, "1701 records") {
		t.Fatalf("prepareCache: %q, %v", msg, err)
	}
}

func TestProfilePath(t *testing.T) {
	for _, tc := range []struct{ path, format, want string }{
		{"/c/bench-kafka-floe.prof", "", "/c/bench-kafka-floe.prof"},
		{"/c/bench-kafka-floe.prof", "json", "/c/bench-kafka-floe.prof"},
		{"/c/bench-kafka-floe.prof", "avro", "/c/bench-kafka-floe-avro.prof"},
		{"/c/p", "protobuf", "/c/p-protobuf"},
	} {
		if got := profilePath(tc.path, tc.format); got != tc.want {
			t.Errorf("profilePath(%q, %q) = %q, want %q", tc.path, tc.format, got, tc.want)
		}
	}
}

// TestWriteBack: the warm-up reads how much was dirty from /proc/meminfo
// (its lines are /proc/PID/status's format) before it syncs.
func TestWriteBack(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo")
	}
	if got := writeBack(); !regexp.MustCompile(`^\d+ MiB of dirty pages$`).MatchString(got) {
		t.Fatalf("writeBack() = %q, want N MiB of dirty pages", got)
	}
}
