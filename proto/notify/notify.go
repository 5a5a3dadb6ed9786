package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// Source gives the node's status report.
type Source interface {
	Report(ctx context.Context) (status.Report, error)
}

// Config configures a Notifier.
type Config struct {
	// URL is the webhook to POST to; empty disables notifications.
	URL string
	// Interval between polls of the report; default 5s.
	Interval time.Duration
	// Timeout of one report call and of one POST; default 10s.
	Timeout time.Duration
	// Log gets delivery failures; default slog.Default().
	Log *slog.Logger
	// Client posts the messages; default a new http.Client.
	Client *http.Client
}

// Delivery retry policy.
const (
	MaxTries   = 5
	MinBackoff = time.Second
	MaxBackoff = 30 * time.Second
)

const (
	stateRunning = "RUNNING"
	statePending = "PENDING"
)

// Notifier watches the report and posts table state changes. Run it once.
type Notifier struct {
	cfg  Config
	src  Source
	log  *slog.Logger
	host string // scheme://host of the URL, for logs

	minBackoff, maxBackoff time.Duration
	last                   map[string]string // table -> last state seen while this node spoke for it
}

// New makes a Notifier; zero Config fields take their defaults.
func New(cfg Config, src Source) *Notifier {
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	n := &Notifier{cfg: cfg, src: src, log: cfg.Log, minBackoff: MinBackoff, maxBackoff: MaxBackoff, last: map[string]string{}}
	n.host = redact(cfg.URL)
	return n
}

// redact keeps the scheme and host of a webhook URL: the path is the secret.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(invalid webhook URL)"
	}
	return u.Scheme + "://" + u.Host
}

// Run polls until ctx ends. It returns at once if no URL is configured.
func (n *Notifier) Run(ctx context.Context) {
	if n.cfg.URL == "" {
		return
	}
	t := time.NewTicker(n.cfg.Interval)
	defer t.Stop()
	for {
		n.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll reads the report once and sends what changed.
func (n *Notifier) poll(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	rep, err := n.src.Report(rctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			n.log.Debug("notify: no status report", "err", err)
		}
		return
	}
	for _, msg := range n.changes(rep) {
		if ctx.Err() != nil {
			return
		}
		n.send(ctx, msg)
	}
}

// changes updates the states seen and returns the messages to send.
func (n *Notifier) changes(rep status.Report) []string {
	var msgs []string
	present := map[string]bool{}
	for _, t := range rep.Tables {
		if present[t.Table] {
			continue
		}
		present[t.Table] = true
		if !speaksFor(rep, t) {
			// Forget it: if this node takes the table over, that is a
			// first sight (the previous node announced what it saw).
			delete(n.last, t.Table)
			continue
		}
		state := t.State
		if state == "" {
			state = statePending
		}
		prev, seen := n.last[t.Table]
		n.last[t.Table] = state
		if msg, ok := message(rep.Node, t, state, prev, seen); ok {
			msgs = append(msgs, msg)
		}
	}
	for table := range n.last {
		if !present[table] {
			delete(n.last, table)
		}
	}
	return msgs
}

// speaksFor: exactly one node announces each table, its committer, or the
// leader while it has none.
func speaksFor(rep status.Report, t status.TableReport) bool {
	if rep.Node == "" {
		return false
	}
	if t.Committer != "" {
		return t.Committer == rep.Node
	}
	return rep.Node == rep.Leader
}

func message(node string, t status.TableReport, state, prev string, seen bool) (string, bool) {
	reason := ""
	if t.Reason != "" {
		reason = ": " + t.Reason
	}
	switch {
	case !seen:
		if state == stateRunning || state == statePending {
			return "", false
		}
		return fmt.Sprintf(":warning: floe table %s is %s%s (node %s)", t.Table, state, reason, node), true
	case state == prev:
		return "", false
	case state == stateRunning && prev == statePending:
		return "", false // a normal start
	case state == stateRunning:
		return fmt.Sprintf(":white_check_mark: floe table %s is RUNNING again (was %s) (node %s)", t.Table, prev, node), true
	case state == statePending:
		return fmt.Sprintf(":information_source: floe table %s is PENDING (was %s)%s (node %s)", t.Table, prev, reason, node), true
	default:
		return fmt.Sprintf(":warning: floe table %s is %s (was %s)%s (node %s)", t.Table, state, prev, reason, node), true
	}
}

// send delivers one message, retrying transient failures; it gives up
// (logging) after MaxTries or when ctx ends.
func (n *Notifier) send(ctx context.Context, text string) {
	body, _ := json.Marshal(map[string]string{"text": text})
	wait := n.minBackoff
	for try := 1; ; try++ {
		retry, after, err := n.post(ctx, body)
		if err == nil {
			return
		}
		if !retry || try >= MaxTries || ctx.Err() != nil {
			if ctx.Err() == nil {
				n.log.Warn("notify: webhook delivery failed, message dropped", "webhook", n.host, "tries", try, "err", err)
			}
			return
		}
		d := wait
		if after > d {
			d = after
		}
		d = min(d, n.maxBackoff)
		n.log.Debug("notify: webhook delivery failed, retrying", "webhook", n.host, "try", try, "in", d, "err", err)
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		wait = min(wait*2, n.maxBackoff)
	}
}

// post makes one attempt. retry says whether the failure is transient;
// after is the server's Retry-After, if any.
func (n *Notifier) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return false, 0, errors.New("bad webhook URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.cfg.Client.Do(req)
	if err != nil {
		// url.Error's text holds the whole URL, secret path included.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return true, 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, 0, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return true, after, fmt.Errorf("webhook answered %s", resp.Status)
	default:
		return false, 0, fmt.Errorf("webhook answered %s", resp.Status)
	}
}
