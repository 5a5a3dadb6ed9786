package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestSASLRefusedShown: a broker that refuses the node's SASL password
// answers every request (its refusal is an answer), so the readers see no
// silent broker; listing topics fails, and that shows within 30 s on the
// node and on the mapped table as one reason. (kfake closes the connection
// after a failed authentication, so the reason here is kafka-go's EOF; a
// real broker answers SASL_AUTHENTICATION_FAILED first.)
func TestSASLRefusedShown(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "sasl"), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "floe", "right"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "sasl", Namespace: "src"}})
	cfg.Kafka.SASL = config.SASL{Mechanism: "PLAIN", Username: "floe", Password: "wrong"}
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	wait.Until(t, 30*time.Second, "the refusal shown", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			return err
		}
		tr := reportTable(rep, "src.sasl")
		if !strings.Contains(rep.Problems["kafka"], "listing topics") || tr.State != status.StateDegraded ||
			!strings.HasPrefix(tr.Reason, "kafka: listing topics") || strings.Contains(tr.Reason, ";") {
			return fmt.Errorf("problems %v, table %s %q", rep.Problems, tr.State, tr.Reason)
		}
		return nil
	})
}
