package status

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Table states shown to operators.
const (
	StatePending   = "PENDING"   // mapped, nothing written yet
	StateRunning   = "RUNNING"   // ingesting and committing
	StateDegraded  = "DEGRADED"  // retrying a failing dependency
	StateSuspended = "SUSPENDED" // stopped at a bad record (error mode suspend)
	// StateConfigIssue: the configuration keeps part of the table from
	// working (for example two topics named into one table); fix the config.
	StateConfigIssue = "CONFIG_ISSUE"
	// StateUnmapped: no mapping routes a topic into the table now (its
	// mapping was deleted); its data stays readable, nothing is ingested.
	StateUnmapped = "UNMAPPED"
	// StateFailed: the table has been DEGRADED without a break for longer
	// than FailAfter; retries go on, but it needs an operator.
	StateFailed = "FAILED"
)

// FailAfter is how long a table stays DEGRADED before it shows FAILED.
const FailAfter = 10 * time.Minute

// PartitionStatus is the runtime view of one assigned partition.
type PartitionStatus struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	Epoch         uint64 `json:"epoch"`
	Fetched       int64  `json:"fetched"` // next offset to fetch
	HighWatermark int64  `json:"high_watermark"`
	LastError     string `json:"last_error,omitempty"`
	// LastErrorAt is when LastError was seen; a reader error that does not
	// recur while the broker answers is cleared (kafka-go retries them).
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// ErrorSince is when the current run of reader errors began.
	ErrorSince time.Time `json:"error_since,omitzero"`
	// Leader is the broker that leads the partition, as its reader last
	// learnt, and LeaderAnsweredAt when that broker last answered this
	// node (its fetch age: source health).
	Leader           string    `json:"leader,omitempty"`
	LeaderAnsweredAt time.Time `json:"leader_answered_at,omitzero"`
}

// HeldPartition is a partition assigned to a node, at Epoch, that the node
// does not read, and Why.
type HeldPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Epoch     uint64 `json:"epoch"`
	Why       string `json:"why"`
}

// TableStatus is the runtime view of one table on this node.
type TableStatus struct {
	Table     string    `json:"table"`
	State     string    `json:"state"`
	Reason    string    `json:"reason,omitempty"`
	Activity            // what this node did for the table, passed on in its report
	Flushes   int64     `json:"flushes"`
	Commits   int64     `json:"commits"`
	LastFlush time.Time `json:"last_flush,omitzero"`
	// Layout as of the last compaction check.
	DataFiles  int                         `json:"data_files"`
	DataBytes  int64                       `json:"data_bytes"`
	Partitions map[string]*PartitionStatus `json:"partitions,omitempty"`
	// Held: partitions assigned to this node that it does not read, and
	// why (draining, suspended, paused, topic paused).
	Held map[string]HeldPartition `json:"held,omitempty"`

	// SuspendedAt is the bad record a suspended table stopped at.
	SuspendedAt *SuspendedRecord `json:"suspended_at,omitempty"`

	// The reasons of each failing component, so one recovering does not hide
	// another still failing.
	problems map[string]string
	// degradedSince is when the current run of problems began.
	degradedSince time.Time
	// now is the tracker's clock (time.Now; a test's fake).
	now func() time.Time
}

// Problem sets (or with msg "" clears) a component's problem on a table and
// recomputes its state.
func (t *TableStatus) Problem(component, msg string) {
	if msg == "" {
		delete(t.problems, component)
	} else {
		t.problems[component] = msg
	}
	t.Recompute()
}

// MaxLastDeadLetters is how many recent dead letters a table's status
// keeps, and maxDeadLetterReason how much of each reason.
const (
	MaxLastDeadLetters  = 5
	maxDeadLetterReason = 512
)

// AddDeadLetter keeps a dead-lettered record (its reason cut to 512 bytes)
// among the table's last ones.
func (t *TableStatus) AddDeadLetter(topic string, partition int32, offset int64, reason string) {
	if len(reason) > maxDeadLetterReason {
		reason = strings.ToValidUTF8(reason[:maxDeadLetterReason], "") + "..."
	}
	t.LastDeadLetters = append(t.LastDeadLetters, SuspendedRecord{Topic: topic, Partition: partition, Offset: offset, Error: reason})
	if n := len(t.LastDeadLetters); n > MaxLastDeadLetters {
		t.LastDeadLetters = slices.Delete(t.LastDeadLetters, 0, n-MaxLastDeadLetters)
	}
}

// Recompute derives the table's state and reason from its problems and
// counters; Problem calls it, callers that only change counters may.
func (t *TableStatus) Recompute() {
	if t.State == StateSuspended {
		return
	}
	if len(t.problems) > 0 {
		if t.State != StateDegraded && t.State != StateConfigIssue {
			t.degradedSince = t.now()
		}
		t.State = StateDegraded
		for k := range t.problems {
			if strings.HasPrefix(k, "config") {
				t.State = StateConfigIssue
			}
		}
		var reasons []string
		for _, k := range slices.Sorted(maps.Keys(t.problems)) {
			reasons = append(reasons, k+": "+t.problems[k])
		}
		t.Reason = strings.Join(reasons, "; ")
		return
	}
	t.Reason = ""
	if t.Flushes > 0 || t.Commits > 0 {
		t.State = StateRunning
	} else {
		t.State = StatePending
	}
}

// Table is one table's entry in a Tracker. Its own lock guards it, so the
// per-record updates of one table's pipeline never contend with other
// tables or take a node-wide lock. Entries are never removed, so a handle
// stays valid for the Tracker's life.
type Table struct {
	mu sync.Mutex
	st TableStatus
}

// Update runs fn on the table's status under the table's lock.
func (t *Table) Update(fn func(*TableStatus)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fn(&t.st)
}

// Tracker collects the node's runtime status. Safe for concurrent use.
//
// Lock order: Tracker.mu, then Table.mu.
type Tracker struct {
	mu     sync.Mutex
	tables map[string]*Table // table key
	global map[string]string // component -> problem (kafka discovery...)
	// brokers is the node's view of the Kafka brokers (source health).
	brokers []BrokerStatus
	now     func() time.Time // the clock of FAILED's threshold
}

// NewTracker returns an empty status.
func NewTracker() *Tracker {
	return &Tracker{tables: map[string]*Table{}, global: map[string]string{}, now: time.Now}
}

// Table returns a table's entry, creating it PENDING with display as its
// name.
func (s *Tracker) Table(key, display string) *Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[key]
	if !ok {
		t = &Table{st: TableStatus{Table: display, State: StatePending, Partitions: map[string]*PartitionStatus{}, problems: map[string]string{}, now: s.now}}
		s.tables[key] = t
	}
	return t
}

// Update runs fn on a table's status under the table's lock.
func (s *Tracker) Update(key, display string, fn func(*TableStatus)) {
	s.Table(key, display).Update(fn)
}

// SetGlobal sets (or clears with "") a node-wide problem.
func (s *Tracker) SetGlobal(component, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if msg == "" {
		delete(s.global, component)
	} else {
		s.global[component] = msg
	}
}

// SetBrokers replaces the node's view of the Kafka brokers.
func (s *Tracker) SetBrokers(b []BrokerStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.brokers = slices.Clone(b)
}

// Brokers returns the node's view of the Kafka brokers.
func (s *Tracker) Brokers() []BrokerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.brokers)
}

// Snapshot returns a deep copy of the status: per table key, and the
// node-wide problems.
func (s *Tracker) Snapshot() (map[string]TableStatus, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]TableStatus, len(s.tables))
	for k, t := range s.tables {
		t.mu.Lock()
		out[k] = t.st.snapshot()
		t.mu.Unlock()
	}
	return out, maps.Clone(s.global)
}

// snapshot copies t deeply, showing FAILED for a table degraded longer
// than FailAfter.
func (t *TableStatus) snapshot() TableStatus {
	c := *t
	c.Partitions = make(map[string]*PartitionStatus, len(t.Partitions))
	for pk, p := range t.Partitions {
		pc := *p
		c.Partitions[pk] = &pc
	}
	c.Held = maps.Clone(t.Held)
	c.problems = nil
	c.LastDeadLetters = slices.Clone(t.LastDeadLetters)
	if t.Upsert != nil {
		u := *t.Upsert
		c.Upsert = &u
	}
	if failing := t.now().Sub(c.degradedSince); c.State == StateDegraded && !c.degradedSince.IsZero() && failing > FailAfter {
		c.State = StateFailed
		c.Reason = fmt.Sprintf("failing for %s: %s", failing.Round(time.Second), c.Reason)
	}
	return c
}

// UpsertStatus counts what the committer of an upsert table did since it
// started (docs/upsert.md), and the keys its index holds.
type UpsertStatus struct {
	Keys           int64   `json:"keys"`            // live keys in the index
	DeleteFiles    int64   `json:"delete_files"`    // position-delete files committed
	DeletedRows    int64   `json:"deleted_rows"`    // rows they delete
	IndexRebuilds  int64   `json:"index_rebuilds"`  // index rebuilds from the table
	RebuildSeconds float64 `json:"rebuild_seconds"` // their total duration
	// IndexFileBytes is the node's key-index file (<data_dir>/upsert-keys.db,
	// shared by the upsert tables it commits): its size on disk.
	IndexFileBytes int64 `json:"index_file_bytes"`
}
