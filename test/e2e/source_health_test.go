package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/floe-io/floe/internal/config"
	"github.com/floe-io/floe/internal/status"
	"github.com/floe-io/floe/internal/testing/brokerhang"
	"github.com/floe-io/floe/internal/testing/testnode"
	"github.com/floe-io/floe/internal/testing/wait"
)

// TestHungBrokerVisible hangs the broker under a running node: it takes
// every request and answers none, as a SIGSTOPped broker does. Within 30 s
// the table is DEGRADED with one reason naming the broker and its
// partitions, the node has one problem, the report lists the broker down
// and /metrics says floe_kafka_broker_up 0. Within 5 s of the broker
// answering again all of it clears, and the records produced during the
// hang arrive exactly once.
func TestHungBrokerVisible(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end")
	}
	kc, cl := testnode.Kafka(t, []kfake.Opt{kfake.SeedTopics(2, "hung")})
	hang := brokerhang.Install(kc) // as a SIGSTOPped broker hangs
	cfg := testnode.Config(t, t.TempDir(), kc.ListenAddrs(), []config.Table{{Topic: "hung", Namespace: "src"}})
	n, err := testnode.Start(context.Background(), cfg, testnode.Logger(t), testnode.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	vals := func(from, k int) []string {
		var out []string
		for i := range k {
			out = append(out, fmt.Sprintf(`{"i":%d}`, from+i))
		}
		return out
	}
	testnode.Produce(t, cl, "hung", vals(0, 100), 2)
	testnode.WaitRows(t, n, "src.hung", 100, time.Minute)

	hang.Stop()
	start := time.Now()
	var tr status.TableReport
	wait.Until(t, 45*time.Second, "the hung broker shown", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			return err
		}
		tr = reportTable(rep, "src.hung")
		if tr.State != status.StateDegraded || !strings.Contains(tr.Reason, "kafka broker: 2 partitions (hung/0, hung/1) wait on broker "+kc.ListenAddrs()[0]) {
			return fmt.Errorf("table %s %q", tr.State, tr.Reason)
		}
		if !strings.Contains(rep.Problems["kafka broker"], "no answer") {
			return fmt.Errorf("node problems %v", rep.Problems)
		}
		if len(rep.Brokers) == 0 || rep.Brokers[0].Up {
			return fmt.Errorf("brokers %+v", rep.Brokers)
		}
		return nil
	})
	shownAfter := time.Since(start)
	if strings.Count(tr.Reason, ";") > 0 {
		t.Errorf("more than one reason: %q", tr.Reason)
	}
	if got := scrapeValue(t, n.AdminAddr(), `floe_kafka_broker_up{broker="`+kc.ListenAddrs()[0]+`"}`); got != "0" {
		t.Errorf("floe_kafka_broker_up = %q while hung, want 0", got)
	}
	if shownAfter > 30*time.Second {
		t.Errorf("shown after %s, want within 30 s", shownAfter)
	}

	hang.Resume()
	start = time.Now()
	wait.Until(t, 30*time.Second, "the outage cleared", func() error {
		rep, err := n.Report(context.Background())
		if err != nil {
			return err
		}
		tr = reportTable(rep, "src.hung")
		if tr.State != status.StateRunning || rep.Problems["kafka broker"] != "" || rep.Problems["kafka"] != "" {
			return fmt.Errorf("table %s %q, problems %v", tr.State, tr.Reason, rep.Problems)
		}
		return nil
	})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cleared %s after the broker answered, want within 5 s", d)
	}
	testnode.Produce(t, cl, "hung", vals(100, 50), 2)
	testnode.WaitRows(t, n, "src.hung", 150, time.Minute)
	t.Logf("shown after %s, cleared after %s", shownAfter.Round(time.Second), time.Since(start).Round(100*time.Millisecond))
}

func reportTable(rep status.Report, name string) status.TableReport {
	for _, tr := range rep.Tables {
		if tr.Table == name {
			return tr
		}
	}
	return status.TableReport{}
}

// scrapeValue returns the value of one series line of /metrics ("" when
// absent).
func scrapeValue(t *testing.T, addr, series string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}
