package floebench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// steadyAck is one record of the steady phase as the broker acknowledged it.
type steadyAck struct {
	partition int32
	offset    int64
	at        time.Time
}

func (kb *kafkaBench) client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(kb.brokers, ",")...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(900 << 10)}, opts...)...)
}

// produceBacklog creates topic with partitions partitions and writes the
// benchmark's records to it in format: record j to partition j mod
// partitions. It returns what it wrote.
func (kb *kafkaBench) produceBacklog(ctx context.Context, topic string, partitions int, format string) (backlog, error) {
	b := backlog{topic: topic, records: kb.records}
	enc, err := kb.encoder(format)
	if err != nil {
		return b, err
	}
	// A longer linger and a deep buffer make full batches even when the
	// records are spread over 1,000 partitions.
	cl, err := kb.client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(50*time.Millisecond), kgo.MaxBufferedRecords(200_000))
	if err != nil {
		return b, err
	}
	defer cl.Close()
	if err := createTopic(ctx, cl, topic, partitions); err != nil {
		return b, err
	}
	var mu sync.Mutex
	var first error
	for j := range kb.records {
		v, err := enc(j)
		if err != nil {
			return b, fmt.Errorf("encoding record %d as %s: %w", j, format, err)
		}
		b.bytes += int64(len(v))
		key := []byte(fmt.Sprintf("order-%07d", j%10_000_000))
		cl.Produce(ctx, &kgo.Record{Partition: int32(j % partitions), Key: key, Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				first = errors.Join(first, err)
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return b, err
	}
	return b, first
}

// createTopic creates topic with partitions partitions, replication 1.
func createTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, int32(partitions), 1
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 60_000
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	if code := resp.Topics[0].ErrorCode; code != 0 {
		return fmt.Errorf("creating topic %s: error code %d", topic, code)
	}
	return nil
}

// produceSteady produces steadyRate records/s over the topic's partitions
// for steadySeconds and returns each record's acknowledgement.
func (kb *kafkaBench) produceSteady(ctx context.Context, topic string, partitions int) ([]steadyAck, error) {
	cl, err := kb.client(kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var mu sync.Mutex
	var acks []steadyAck
	var first error
	// Paced by the clock, not by ticks: on a loaded machine a ticker drops
	// ticks, and the rate would fall short; here each wake-up catches up.
	start, dur := time.Now(), time.Duration(kb.steadySeconds)*time.Second
	for sent := 0; ; {
		elapsed := time.Since(start)
		if elapsed >= dur {
			break
		}
		for due := int(elapsed.Seconds() * float64(kb.steadyRate)); sent < due; sent++ {
			j := kb.records + sent
			v := []byte(benchRecord(j))
			cl.Produce(ctx, &kgo.Record{Partition: int32(j % partitions), Key: v[:12], Value: v}, func(r *kgo.Record, err error) {
				at := time.Now()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					first = errors.Join(first, err)
					return
				}
				acks = append(acks, steadyAck{partition: r.Partition, offset: r.Offset, at: at})
			})
		}
		if err := sleepCtx(ctx, 10*time.Millisecond); err != nil {
			return nil, err
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	return acks, first
}

// highWatermarks are the topic's end offsets per partition.
func (kb *kafkaBench) highWatermarks(ctx context.Context, topic string) (map[int32]int64, error) {
	cl, err := kb.client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil || len(mresp.Topics) != 1 {
		return nil, fmt.Errorf("metadata of %s: %v", topic, err)
	}
	req := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = topic
	for _, p := range mresp.Topics[0].Partitions {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = p.Partition, -1
		lt.Partitions = append(lt.Partitions, lp)
	}
	req.Topics = append(req.Topics, lt)
	// kgo splits the request by partition leader and merges the answers.
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return nil, fmt.Errorf("end offset of %s/%d: error code %d", topic, p.Partition, p.ErrorCode)
			}
			out[p.Partition] = p.Offset
		}
	}
	if len(out) != len(mresp.Topics[0].Partitions) {
		return nil, fmt.Errorf("end offsets of %s: %d of %d partitions answered", topic, len(out), len(mresp.Topics[0].Partitions))
	}
	return out, nil
}
