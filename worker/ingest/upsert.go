package ingest

import (
	"github.com/floe-io/floe/internal/ledger"
	"github.com/floe-io/floe/internal/records"
)

// upsertByKafkaKey reports whether the table keeps one row per Kafka
// record key: the tables whose tombstones delete a key. A table keyed by
// payload fields cannot read a key from a null value, so its tombstones
// go where its tombstones setting says, as in an append table.
func (p *Pipeline) upsertByKafkaKey() bool {
	return p.spec.Upsert() && len(p.spec.UpsertKey) == 0
}

// upsertFlush prepares an upsert table's flush of buf: per partition and
// Kafka key only the last record stays (the later one wins, and a
// tombstone deletes what came before it), and the tombstones that stay
// are listed by offset for the ledger entry. Records without a key all
// stay: they are never replaced. A table keyed by payload fields keeps
// every record; its committer orders a key's rows by offset.
func (p *Pipeline) upsertFlush(buf []*records.Record) ([]*records.Record, map[string][]int64) {
	if !p.spec.Upsert() {
		return buf, nil
	}
	if p.upsertByKafkaKey() {
		type pk struct {
			part int32
			key  string
		}
		last := make(map[pk]int, len(buf))
		for i, r := range buf {
			if r.Key != nil {
				last[pk{r.Partition, string(r.Key)}] = i
			}
		}
		out := buf[:0:0]
		for i, r := range buf {
			if r.Key == nil || last[pk{r.Partition, string(r.Key)}] == i {
				out = append(out, r)
			}
		}
		buf = out
	}
	var tombs map[string][]int64
	for _, r := range buf {
		if r.Tombstone {
			if tombs == nil {
				tombs = map[string][]int64{}
			}
			tp := ledger.TopicPartition{Topic: r.Topic, Partition: r.Partition}.String()
			tombs[tp] = append(tombs[tp], r.Offset)
		}
	}
	return buf, tombs
}
