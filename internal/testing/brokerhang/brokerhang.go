// Package brokerhang hangs an in-process kfake broker the way a SIGSTOPped
// broker hangs: it keeps accepting connections and requests and answers
// none of them until resumed, then answers every waiting request in order.
// The source-health tests of worker/source and cmd/floe share it.
package brokerhang

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Hang controls one cluster's requests.
type Hang struct {
	mu     sync.Mutex
	hung   bool
	resume chan struct{}
}

// Install adds a control function to kc that holds every request while
// the Hang is stopped; it runs for the cluster's life.
func Install(kc *kfake.Cluster) *Hang {
	h := &Hang{}
	kc.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		kc.KeepControl()
		h.mu.Lock()
		hung, resume := h.hung, h.resume
		h.mu.Unlock()
		if hung {
			kc.SleepControl(func() { <-resume })
		}
		return nil, nil, false // then handled as usual
	})
	return h
}

// Stop hangs the broker: requests from now on wait unanswered.
func (h *Hang) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.hung {
		h.hung, h.resume = true, make(chan struct{})
	}
}

// Resume answers every waiting request, and the ones after.
func (h *Hang) Resume() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hung {
		h.hung = false
		close(h.resume)
	}
}
