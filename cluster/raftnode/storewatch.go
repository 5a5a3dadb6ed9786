package raftnode

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// storageProblemFor is how long a failed write to the Raft log keeps the
// node's storage problem shown after the last failure, even when a write
// succeeded since: on a full disk a small write into pages the file
// already owns can succeed between failures, and the status must not
// flicker.
const storageProblemFor = 5 * time.Second

// watchedStore is the Raft log and stable store with its write failures
// remembered, so the node's status can say it cannot persist the log (a
// full disk, a read-only file system) rather than leave it to Raft's log
// lines. Raft itself already refuses to go on without the write: a leader
// steps down, a follower answers the append as failed.
type watchedStore struct {
	*raftboltdb.BoltStore
	path string

	mu        sync.Mutex
	err       error
	failedAt  time.Time
	succeeded time.Time
}

func (s *watchedStore) note(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err, s.failedAt = err, time.Now()
	} else {
		s.succeeded = time.Now()
	}
	return err
}

func (s *watchedStore) StoreLog(l *raft.Log) error { return s.note(s.BoltStore.StoreLog(l)) }
func (s *watchedStore) StoreLogs(ls []*raft.Log) error {
	return s.note(s.BoltStore.StoreLogs(ls))
}
func (s *watchedStore) DeleteRange(lo, hi uint64) error {
	return s.note(s.BoltStore.DeleteRange(lo, hi))
}
func (s *watchedStore) Set(k, v []byte) error { return s.note(s.BoltStore.Set(k, v)) }
func (s *watchedStore) SetUint64(k []byte, v uint64) error {
	return s.note(s.BoltStore.SetUint64(k, v))
}

// problem describes the last write failure while it is current: newer than
// the last success, or less than storageProblemFor old. "" otherwise.
func (s *watchedStore) problem(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil || (!s.failedAt.After(s.succeeded) && now.Sub(s.failedAt) >= storageProblemFor) {
		return ""
	}
	return fmt.Sprintf("cannot write the Raft log %s (%.1fs ago: %v): this node applies nothing new and takes no work until it can (its partitions and committer roles move); the others go on",
		s.path, now.Sub(s.failedAt).Seconds(), s.err)
}

// StorageProblem says why this node cannot write its Raft log, "" when it
// can (see watchedStore).
func (n *Node) StorageProblem() string { return n.store.problem(time.Now()) }
