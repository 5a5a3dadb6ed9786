package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/floe-io/floe/internal/ledger"
)

// How a broker is judged from what the readers' clients saw of it.
//
// A reader's fetch is a long poll of at most FetchMaxWait (250 ms), so a
// broker that answers answers several times a second; one that took a
// request and has said nothing for HungAfter has stopped (a process hung in
// a GC pause or on a stuck disk, a half-open connection, traffic
// black-holed). franz-go itself only notices when the request's read
// deadline passes, and then reconnects to the same silent broker; the
// readers then saw nothing for minutes while every table looked RUNNING.
//
// A broker whose connections or requests fail (refused, DNS, TLS, SASL,
// reset) is down once its errors have gone on for ErrorsFor with no answer
// in between: one reset that a reconnect heals is not a problem. Errors
// older than ForgetAfter are forgotten, so a broker the clients stopped
// using (it left the cluster) does not stay down for ever.
const (
	HungAfter   = 10 * time.Second
	ErrorsFor   = 5 * time.Second
	ForgetAfter = time.Minute
)

// ErrBroker marks a reader error that concerns a broker rather than one
// partition (the broker cannot be reached or stopped answering): the
// node's source health reports it once, for every partition waiting on it.
var ErrBroker = errors.New("broker unavailable")

// BrokerHealth is what the readers saw of one broker.
type BrokerHealth struct {
	Addr   string // host:port
	NodeID int32  // -1 while known only as a seed
	Up     bool
	// Since is when it went down (zero while up).
	Since time.Time
	// LastResponse is when it last answered a request.
	LastResponse time.Time
	// Reason says why it is down: no answer for how long, or its error.
	Reason string
}

// Health is the node's view of its brokers: every broker the readers
// talked to, and the partitions read here whose leader is down.
type Health struct {
	Brokers []BrokerHealth
	// Waiting is each partition read on this node whose leader is down,
	// with that broker's address.
	Waiting map[ledger.TopicPartition]string
	// Leaders is each partition read on this node with its leader's
	// address and when that broker last answered (for the per-table
	// fetch age); a partition whose leader is unknown is absent.
	Leaders map[ledger.TopicPartition]BrokerSeen
}

// BrokerSeen is a partition's leader and when it last answered.
type BrokerSeen struct {
	Addr         string
	LastResponse time.Time
}

// Requests are waited on in two groups: fetches and the rest. A broker
// whose disk is stuck still answers metadata and API versions from memory
// while its fetches hang, so an answer to one group must not clear the
// other's wait.
const (
	groupFetch = iota
	groupOther
	groups
)

func groupOf(key int16) int {
	if key == 1 { // Fetch
		return groupFetch
	}
	return groupOther
}

// brokerState is one broker's counters, under healthTracker.mu.
type brokerState struct {
	nodeID int32
	lastOK time.Time // a response read
	// waitStart is the first request of a group written since that
	// group's last answer, while waiting.
	waitStart [groups]time.Time
	waiting   [groups]bool
	errStart  time.Time // the first error since the last response
	lastErrAt time.Time
	lastErr   string
}

// healthTracker is a franz-go hook shared by every lane's client of a
// node: it follows each broker's requests, answers and errors.
type healthTracker struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[string]*brokerState // by host:port
}

func newHealthTracker() *healthTracker {
	return &healthTracker{now: time.Now, by: map[string]*brokerState{}}
}

var (
	_ kgo.HookBrokerConnect = (*healthTracker)(nil)
	_ kgo.HookBrokerWrite   = (*healthTracker)(nil)
	_ kgo.HookBrokerE2E     = (*healthTracker)(nil)
)

func brokerAddr(m kgo.BrokerMetadata) string {
	return net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port)))
}

// state returns the broker's entry, made on first sight; under mu.
func (h *healthTracker) state(m kgo.BrokerMetadata) *brokerState {
	addr := brokerAddr(m)
	s := h.by[addr]
	if s == nil {
		s = &brokerState{nodeID: -1}
		h.by[addr] = s
	}
	if m.NodeID >= 0 {
		s.nodeID = m.NodeID // seeds have negative ids
	}
	return s
}

// OnBrokerConnect records a failed connection (refused, DNS, TLS, SASL);
// a successful one proves nothing until the broker answers a request.
func (h *healthTracker) OnBrokerConnect(m kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil {
		h.failed(m, "connecting", err)
	}
}

// OnBrokerWrite starts the wait for an answer.
func (h *healthTracker) OnBrokerWrite(m kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		h.failed(m, "writing a request", err)
		return
	}
	now := h.now()
	h.mu.Lock()
	s := h.state(m)
	if g := groupOf(key); !s.waiting[g] {
		s.waiting[g], s.waitStart[g] = true, now
	}
	h.mu.Unlock()
}

// OnBrokerE2E records an answer, or a request that failed.
func (h *healthTracker) OnBrokerE2E(m kgo.BrokerMetadata, key int16, e kgo.BrokerE2E) {
	if e.WriteErr != nil {
		return // OnBrokerWrite saw it, or the connection died (its error is recorded there)
	}
	if e.ReadErr != nil {
		h.failed(m, "reading a response", e.ReadErr)
		return
	}
	now := h.now()
	h.mu.Lock()
	s := h.state(m)
	s.lastOK = now
	s.waiting[groupOf(key)] = false
	s.errStart, s.lastErr = time.Time{}, ""
	h.mu.Unlock()
}

// failed records a broker's error. A client closing or a request cancelled
// (partitions removed) says nothing about the broker.
func (h *healthTracker) failed(m kgo.BrokerMetadata, what string, err error) {
	if errors.Is(err, kgo.ErrClientClosed) || errors.Is(err, context.Canceled) || errors.Is(err, net.ErrClosed) {
		return
	}
	msg := what + ": " + err.Error()
	now := h.now()
	h.mu.Lock()
	s := h.state(m)
	if s.errStart.IsZero() {
		s.errStart = now
	}
	s.lastErrAt, s.lastErr = now, msg
	h.mu.Unlock()
}

// brokers judges every broker seen, sorted by address; needed are the
// brokers that lead a partition read on this node.
func (h *healthTracker) brokers(needed map[string]bool) []BrokerHealth {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]BrokerHealth, 0, len(h.by))
	for addr, s := range h.by {
		out = append(out, s.judge(addr, needed[addr], now))
	}
	slices.SortFunc(out, func(a, b BrokerHealth) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// judge says whether the broker is up at now, and if not since when and
// why. A broker that leads a partition read here (needed) is down while a
// request to it has waited HungAfter for an answer; any broker is down
// while its errors have gone on for ErrorsFor (and are not older than
// ForgetAfter) with no answer since they began. A request left unanswered
// when a client closed is no sign of anything: only a needed broker, which
// the remaining clients keep asking, is judged by its silence.
func (s *brokerState) judge(addr string, needed bool, now time.Time) BrokerHealth {
	b := BrokerHealth{Addr: addr, NodeID: s.nodeID, Up: true, LastResponse: s.lastOK}
	freshErr := s.lastErr != "" && now.Sub(s.lastErrAt) < ForgetAfter
	hung := -1
	for g := range groups {
		if needed && s.waiting[g] && now.Sub(s.waitStart[g]) >= HungAfter && (hung < 0 || s.waitStart[g].Before(s.waitStart[hung])) {
			hung = g
		}
	}
	switch {
	case hung >= 0:
		what := "no answer"
		if hung == groupFetch {
			what = "no answer to fetches"
		}
		b.Up, b.Since = false, s.waitStart[hung]
		b.Reason = what + " for " + now.Sub(s.waitStart[hung]).Truncate(time.Second).String() + " (the broker is hung, its disk is stuck or the network drops its traffic)"
		if freshErr {
			b.Reason += ", last error: " + s.lastErr
		}
	case freshErr && now.Sub(s.errStart) >= ErrorsFor:
		b.Up, b.Since, b.Reason = false, s.errStart, s.lastErr
	}
	return b
}

// addrOf maps broker ids seen by the hooks to their addresses.
func (h *healthTracker) addrOf() map[int32]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[int32]string, len(h.by))
	for addr, s := range h.by {
		if s.nodeID >= 0 {
			out[s.nodeID] = addr
		}
	}
	return out
}

// health judges the brokers and the partitions read on this node: which
// broker leads each (as the lane's client last learnt from metadata) and
// which wait on a broker that is down.
func (c *nodeConsumer) health() Health {
	addrs := c.tracker.addrOf()
	leaders := map[ledger.TopicPartition]string{}
	c.mu.Lock()
	lanes := slices.Clone(c.lanes)
	c.mu.Unlock()
	for _, l := range lanes {
		l.mu.Lock()
		tps := make([]ledger.TopicPartition, 0, len(l.regs))
		for tp := range l.regs {
			tps = append(tps, tp)
		}
		l.mu.Unlock()
		for _, tp := range tps {
			id, _, err := l.cl.PartitionLeader(tp.Topic, tp.Partition)
			if addr, ok := addrs[id]; err == nil && ok {
				leaders[tp] = addr
			}
		}
	}
	needed := map[string]bool{}
	for _, addr := range leaders {
		needed[addr] = true
	}
	h := Health{Brokers: c.tracker.brokers(needed), Leaders: map[ledger.TopicPartition]BrokerSeen{}}
	byAddr := map[string]BrokerHealth{}
	for _, b := range h.Brokers {
		byAddr[b.Addr] = b
	}
	for tp, addr := range leaders {
		b := byAddr[addr]
		h.Leaders[tp] = BrokerSeen{Addr: addr, LastResponse: b.LastResponse}
		if !b.Up {
			if h.Waiting == nil {
				h.Waiting = map[ledger.TopicPartition]string{}
			}
			h.Waiting[tp] = addr
		}
	}
	return h
}

// brokerLevel reports whether a reader's error is the broker's (it cannot
// be reached, or stopped answering) rather than the partition's.
func brokerLevel(err error) bool {
	var netErr net.Error
	var eof *kgo.ErrFirstReadEOF
	return errors.As(err, &netErr) || errors.As(err, &eof) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// asBrokerErr marks err with ErrBroker when it is the broker's.
func asBrokerErr(err error) error {
	if err == nil || errors.Is(err, ErrBroker) || !brokerLevel(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrBroker, err)
}
