package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/floe-io/floe/internal/status"
)

// Source health (the Kafka brokers as this node's readers see them): the
// families let an alert fire on a broker that stops answering while lag
// stays 0 (a hung broker is not asked for its high watermarks either).
const (
	KafkaBrokerUp          = "floe_kafka_broker_up"
	KafkaBrokerResponseAge = "floe_kafka_broker_response_age_seconds"
	TableFetchAge          = "floe_table_fetch_age_seconds"
)

// sourceDescs are the source-health descriptions.
type sourceDescs struct {
	brokerUp, brokerAge, fetchAge *prometheus.Desc
}

func newSourceDescs() sourceDescs {
	return sourceDescs{
		brokerUp: prometheus.NewDesc(KafkaBrokerUp, "1 if the Kafka broker answers this node's readers, 0 while it is down (no answer for 10 s to a request, or errors for 5 s).",
			[]string{"broker"}, nil),
		brokerAge: prometheus.NewDesc(KafkaBrokerResponseAge, "Seconds since the Kafka broker last answered this node's readers.",
			[]string{"broker"}, nil),
		fetchAge: prometheus.NewDesc(TableFetchAge, "Seconds since the broker leading the table's partitions read on this node last answered (the oldest of its partitions).",
			[]string{"table", "broker"}, nil),
	}
}

func (d sourceDescs) describe(ch chan<- *prometheus.Desc) {
	ch <- d.brokerUp
	ch <- d.brokerAge
	ch <- d.fetchAge
}

// collect emits the brokers' series and each table's fetch age by broker.
func (d sourceDescs) collect(ch chan<- prometheus.Metric, rep status.Report) {
	now := rep.GeneratedAt
	seen := map[string]bool{}
	for _, b := range rep.Brokers {
		if seen[b.Addr] {
			continue
		}
		seen[b.Addr] = true
		ch <- constMetric(d.brokerUp, prometheus.GaugeValue, b2f(b.Up), b.Addr)
		if !b.LastResponse.IsZero() {
			ch <- constMetric(d.brokerAge, prometheus.GaugeValue, age(now, b.LastResponse), b.Addr)
		}
	}
	tables := map[string]bool{}
	for _, t := range rep.Tables {
		if tables[t.Table] {
			continue
		}
		tables[t.Table] = true
		oldest := map[string]float64{}
		for _, p := range t.Partitions {
			if p.Leader == "" {
				continue
			}
			if a, ok := oldest[p.Leader]; !ok || p.FetchAgeSec > a {
				oldest[p.Leader] = p.FetchAgeSec
			}
		}
		for broker, a := range oldest {
			ch <- constMetric(d.fetchAge, prometheus.GaugeValue, a, t.Table, broker)
		}
	}
}

func age(now, at time.Time) float64 { return max(0, now.Sub(at).Seconds()) }
