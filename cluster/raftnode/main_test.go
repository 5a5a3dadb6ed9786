package raftnode

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Raft's transport and bolt keep no goroutines after Close, but the
		// net/http keep-alive pool of iceberg-go's IO may linger briefly.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
