package logbuf

import (
	"bytes"
	"sync"
)

// Buffer collects log lines written from many goroutines; a bytes.Buffer
// alone would race between the node's writers and the test's reads.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it implements io.Writer for slog handlers.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
