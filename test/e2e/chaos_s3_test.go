//go:build long

package e2e

// S3 throttling for the chaos schedule, when the warehouse is on S3
// (FLOE_CHAOS_S3_ENDPOINT: interop scenario 7 on MinIO): the nodes reach
// S3 through a proxy in this process that, while on, answers a third of
// the object keys (by a hash of the path) with 503 SlowDown, as S3 does to
// a hot prefix, and passes the rest through. The test reads tables
// directly, never through the proxy.

import (
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

// s3Heal bounds how long after a throttle ends every table must commit
// again: twice the 5 s asked of every infrastructure fault, as slack for a
// shared machine (measured 1.7-2.5 s on MinIO; the figure of each run is in
// its event log). A commit that failed on throttling waits out the SDK's
// retries and Floe's backoff.
const s3Heal = 10 * time.Second

type s3Throttle struct {
	srv       *httptest.Server
	on        atomic.Bool
	throttled atomic.Int64
}

// addS3Throttle puts the proxy between the nodes started from now on and
// the fleet's S3 endpoint; nil when the warehouse is not on S3.
func (f *fleet) addS3Throttle() *s3Throttle {
	if f.wh.S3.Endpoint == "" {
		return nil
	}
	target, err := url.Parse(f.wh.S3.Endpoint)
	if err != nil {
		f.t.Fatal(err)
	}
	st := &s3Throttle{}
	rp := httputil.NewSingleHostReverseProxy(target)
	// The Host header stays the proxy's, which the SigV4 signature covers.
	st.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(r.URL.Path))
		if st.on.Load() && h.Sum32()%3 == 0 {
			st.throttled.Add(1)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	f.t.Cleanup(st.srv.Close)
	f.s3Endpoint = st.srv.URL
	return st
}

// committedSums returns the committed offsets of each mapped topic's table,
// summed over its partitions.
func (f *fleet) committedSums() (map[string]int64, error) {
	rep, _, err := f.status()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, topic := range f.topics {
		tr, _ := tableReport(rep, tableOf(topic))
		for _, p := range tr.Partitions {
			out[topic] += p.Committed
		}
	}
	return out, nil
}

// s3Throttle throttles a third of the S3 keys for 2-6 s while the load
// goes on, then checks that every table commits again and logs how soon.
func (c *chaos) s3ThrottleStep() {
	f, st := c.f, c.s3
	d := time.Duration(2000+c.rng.IntN(4000)) * time.Millisecond
	before := st.throttled.Load()
	f.event("S3 throttling a third of the keys for %s", d)
	st.on.Store(true)
	time.Sleep(d) // the fault: throttled that long
	st.on.Store(false)
	took, err := f.commitsAgain(s3Heal) // chaos_clock_test.go
	f.event("S3 throttle over: %d requests answered SlowDown; every table committed again %.1fs after it", st.throttled.Load()-before, took.Seconds())
	if err != nil {
		f.t.Errorf("a table did not commit within %s of the S3 throttle's end: %v", s3Heal, err)
	}
}
