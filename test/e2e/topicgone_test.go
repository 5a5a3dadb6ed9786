package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestTopicDeletedShownOnce: a mapped topic deleted under a running node
// shows within 30 s as one reason on its table (its readers wait on the
// missing partitions without an error of their own).
func TestTopicDeletedShownOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(3, "gone")})
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "gone", Namespace: "src"}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	testnode.Produce(t, cl, "gone", []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, 3)
	testnode.WaitRows(t, n, "src.gone", 3, time.Minute)
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TopicNames = []string{"gone"}
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("gone")
	del.Topics = append(del.Topics, dt)
	if _, err := del.RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var tr status.TableReport
	wait.Until(t, 45*time.Second, "the deleted topic shown", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			return err
		}
		tr = reportTable(rep, "src.gone")
		if tr.State != status.StateDegraded || !strings.Contains(tr.Reason, "topic gone not found") {
			return fmt.Errorf("%s %q", tr.State, tr.Reason)
		}
		return nil
	})
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("shown after %s, want within 30 s", d)
	}
	if strings.Count(tr.Reason, ";") > 0 {
		t.Errorf("more than one reason: %q", tr.Reason)
	}
}
