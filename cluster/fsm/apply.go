package fsm

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/floe-io/floe/internal/ledger"
)

func applyRegisterNode(s *State, c *RegisterNode) error {
	n := c.Node
	if n.ID == "" {
		return fmt.Errorf("registering node: empty id")
	}
	s.Nodes[n.ID] = &n
	return nil
}

func applyDrainNode(s *State, c *DrainNode) error {
	m, ok := s.Nodes[c.ID]
	if !ok {
		return fmt.Errorf("draining node %s: %w", c.ID, ErrUnknownNode)
	}
	m.Draining = c.Draining
	// The process's own drain (at shutdown) leaves an operator's mark as
	// it is; clearing the drain clears both.
	switch {
	case !c.Draining:
		m.DrainedByOperator = false
	case c.Operator:
		m.DrainedByOperator = true
	}
	return nil
}

// applyRemoveNode forgets a member. Its assignments stay in the ledger with
// their epochs until the controller moves them: the epochs must keep growing.
func applyRemoveNode(s *State, c *RemoveNode) error {
	if _, ok := s.Nodes[c.ID]; !ok {
		return nil // removed already: removal is idempotent
	}
	delete(s.Nodes, c.ID)
	return nil
}

// applyCatalogSynced records a sync. It is refused from a stale committer,
// and a record for a metadata location older than the table's current one
// that is not newer than the last record is kept anyway: the committer only
// syncs forward, and the FSM cannot order metadata locations itself.
func applyCatalogSynced(s *State, c *CatalogSynced) error {
	t, ok := s.Tables[c.Table]
	if !ok {
		return fmt.Errorf("recording sync of table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	if c.Catalog == "" || c.MetadataLocation == "" {
		return fmt.Errorf("recording sync of table %s: catalog and metadata location required", ledger.DisplayName(c.Table))
	}
	if c.Committer != nil {
		key := c.Table
		if _, isDLQ := s.Committers[key]; !isDLQ && len(key) > 4 && key[len(key)-4:] == "_dlq" {
			key = key[:len(key)-4] // a dead-letter table is synced by its table's committer
		}
		if cur, ok := s.Committers[key]; !ok || cur != *c.Committer {
			return fmt.Errorf("recording sync of table %s as %s epoch %d (committer is %s epoch %d): %w",
				ledger.DisplayName(c.Table), c.Committer.Node, c.Committer.Epoch, cur.Node, cur.Epoch, ErrStaleCommitter)
		}
	}
	if t.Synced == nil {
		t.Synced = map[string]SyncRecord{}
	}
	t.Synced[c.Catalog] = SyncRecord{MetadataLocation: c.MetadataLocation, At: c.At}
	return nil
}

// applyBackupWritten keeps the newest report: a deposed leader's late
// report of an older backup does not move it back.
func applyBackupWritten(s *State, c *BackupWritten) error {
	if s.LastBackup == nil || c.At >= s.LastBackup.At {
		b := *c
		s.LastBackup = &b
	}
	return nil
}

func applyCreateNamespace(s *State, c *CreateNamespace) error {
	key := ledger.TableKey(c.Parts)
	if _, ok := s.Namespaces[key]; ok {
		if c.IfNotExists {
			return nil
		}
		return fmt.Errorf("creating namespace %s: %w", strings.Join(c.Parts, "."), ErrNamespaceAlreadyExists)
	}
	s.Namespaces[key] = &Namespace{Parts: slices.Clone(c.Parts), Props: maps.Clone(c.Props)}
	return nil
}

func applyDropNamespace(s *State, c *DropNamespace) error {
	key := ledger.TableKey(c.Parts)
	if _, ok := s.Namespaces[key]; !ok {
		return fmt.Errorf("dropping namespace %s: %w", strings.Join(c.Parts, "."), ErrNoSuchNamespace)
	}
	for _, t := range s.Tables {
		if ledger.TableKey(t.Ident[:len(t.Ident)-1]) == key {
			return fmt.Errorf("dropping namespace %s: %w", strings.Join(c.Parts, "."), ErrNamespaceNotEmpty)
		}
	}
	delete(s.Namespaces, key)
	return nil
}

func applyUpdateNamespace(s *State, c *UpdateNamespace) error {
	ns, ok := s.Namespaces[ledger.TableKey(c.Parts)]
	if !ok {
		return fmt.Errorf("updating namespace %s: %w", strings.Join(c.Parts, "."), ErrNoSuchNamespace)
	}
	if ns.Props == nil {
		ns.Props = map[string]string{}
	}
	for _, k := range c.Removals {
		delete(ns.Props, k)
	}
	maps.Copy(ns.Props, c.Updates)
	return nil
}

func applyCreateTable(s *State, c *CreateTable) error {
	if len(c.Ident) < 2 {
		return fmt.Errorf("creating table %v: identifier needs a namespace and a name", c.Ident)
	}
	if _, ok := s.Namespaces[ledger.TableKey(c.Ident[:len(c.Ident)-1])]; !ok {
		return fmt.Errorf("creating table %s: %w", strings.Join(c.Ident, "."), ErrNoSuchNamespace)
	}
	key := ledger.TableKey(c.Ident)
	if _, ok := s.Tables[key]; ok {
		return fmt.Errorf("creating table %s: %w", strings.Join(c.Ident, "."), ErrTableAlreadyExists)
	}
	s.Tables[key] = &Table{Ident: slices.Clone(c.Ident), MetadataLocation: c.MetadataLocation}
	return nil
}

func applyDropTable(s *State, c *DropTable) error {
	key := ledger.TableKey(c.Ident)
	if _, ok := s.Tables[key]; !ok {
		return fmt.Errorf("dropping table %s: %w", strings.Join(c.Ident, "."), ErrNoSuchTable)
	}
	delete(s.Tables, key)
	delete(s.Committers, key)
	s.Ledger.DropTable(key)
	return nil
}

func applyRecordFiles(s *State, c *RecordFiles) error {
	if _, ok := s.Tables[c.Table]; !ok {
		return fmt.Errorf("recording files for table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	if err := s.Ledger.Record(c.Table, c.Entry); err != nil {
		return fmt.Errorf("recording files for table %s: %w", ledger.DisplayName(c.Table), err)
	}
	return nil
}

// applyCommitTables validates everything before changing anything, so a
// refused commit leaves the state untouched.
func applyCommitTables(s *State, c *CommitTables) error {
	if len(c.Swaps) == 0 {
		return fmt.Errorf("commit without tables")
	}
	for _, sw := range c.Swaps {
		t, ok := s.Tables[sw.Table]
		if !ok {
			return fmt.Errorf("committing table %s: %w", ledger.DisplayName(sw.Table), ErrNoSuchTable)
		}
		if t.MetadataLocation != sw.Expected {
			return fmt.Errorf("committing table %s: %w", ledger.DisplayName(sw.Table),
				commitFailed("expected metadata %s, current is %s", sw.Expected, t.MetadataLocation))
		}
	}
	if c.Committer != nil {
		cur, ok := s.Committers[c.Table]
		if !ok || cur != *c.Committer {
			return fmt.Errorf("committing table %s as %s epoch %d (committer is %s epoch %d): %w",
				ledger.DisplayName(c.Table), c.Committer.Node, c.Committer.Epoch, cur.Node, cur.Epoch, ErrStaleCommitter)
		}
	}
	if c.RewindGen != 0 {
		if err := checkRewindDone(s, c.Table, c.RewindGen); err != nil { // operate.go
			return err
		}
	} else if len(c.Entries) > 0 && s.Rewinds[c.Table].ReplacePending() {
		// Rows appended before the replace delete would be deleted by it.
		return fmt.Errorf("committing table %s: %w", ledger.DisplayName(c.Table),
			commitFailed("the replace delete of rewind %d must commit first", s.Rewinds[c.Table].Gen))
	}
	if c.Table != "" {
		if err := s.Ledger.CheckCommit(c.Table, c.Entries); err != nil {
			return fmt.Errorf("committing table %s: %w", ledger.DisplayName(c.Table), err)
		}
	}
	if err := checkDelta(s, c); err != nil {
		return err
	}
	// Validation passed: apply.
	for _, sw := range c.Swaps {
		t := s.Tables[sw.Table]
		t.PreviousMetadataLocation = t.MetadataLocation
		t.MetadataLocation = sw.New
		t.Commits++
		t.LastCommitAt = c.At
		t.LastCommitID = c.CommitID
	}
	if c.RewindGen != 0 {
		rw := s.Rewinds[c.Table]
		rw.ReplaceDone, rw.DeletedRows = true, c.DeletedRows
		if t := s.Tables[c.Table]; t != nil {
			t.Rows = max(t.Rows-c.DeletedRows, 0)
		}
	}
	if c.Delta != nil {
		d := *c.Delta
		s.Tables[c.Table].Delta = &d
	}
	if c.Table == "" || len(c.Entries) == 0 {
		return nil
	}
	done, err := s.Ledger.Commit(c.Table, c.Entries)
	if err != nil { // unreachable after CheckCommit; kept for safety
		return fmt.Errorf("committing table %s: %w", ledger.DisplayName(c.Table), err)
	}
	t := s.Tables[c.Table]
	dlq := s.Tables[DLQKey(c.Table)]
	clearPassedSkips(s, c.Table) // resume.go
	for _, e := range done {
		t.Rows += e.Records
		t.Files += int64(len(e.Files))
		t.DLQRecords += e.DLQ
		t.NewestRecordTS = max(t.NewestRecordTS, e.MaxTimestamp)
		if dlq != nil {
			dlq.Rows += e.DLQ
			dlq.Files += int64(len(e.DLQFiles))
		}
	}
	return nil
}

// checkDelta refuses a commit whose Delta version would skip or repeat a
// commit sequence of its table: the sequence must be one past the last
// recorded (1 for the first). The version is not compared: a log an
// operator deleted starts again at version 0 (the committer rebuilds it
// from the Iceberg table), and the sequence alone orders the commits. A
// refusal is retryable (table.ErrCommitFailed): the committer's state
// lags, and it re-reads the Delta log's tail before it tries again.
func checkDelta(s *State, c *CommitTables) error {
	if c.Delta == nil {
		return nil
	}
	t, ok := s.Tables[c.Table]
	if c.Table == "" || !ok {
		return fmt.Errorf("recording a delta version for table %s: %w", ledger.DisplayName(c.Table), ErrNoSuchTable)
	}
	var last ledger.DeltaCommit
	if t.Delta != nil {
		last = *t.Delta
	}
	if c.Delta.Sequence != last.Sequence+1 {
		return fmt.Errorf("committing table %s: %w", ledger.DisplayName(c.Table),
			commitFailed("delta sequence %d (version %d) does not follow the recorded sequence %d (version %d)",
				c.Delta.Sequence, c.Delta.Version, last.Sequence, last.Version))
	}
	return nil
}

// DLQKey is the key of a table's dead-letter table: same namespace, name
// suffixed with _dlq.
func DLQKey(tableKey string) string { return tableKey + "_dlq" }

func applyRegisterSources(s *State, c *RegisterSources) error {
	for _, src := range c.Sources {
		if src.Topic == "" || src.Partitions < 0 {
			return fmt.Errorf("registering source %+v: topic and partition count required", src)
		}
	}
	for _, src := range c.Sources {
		cur, ok := s.Sources[src.Topic]
		// Kafka partition counts only grow; a smaller count comes from a
		// stale view and must not shrink the assignment.
		if ok && cur.Table == src.Table && src.Partitions < cur.Partitions {
			continue
		}
		v := src
		s.Sources[src.Topic] = &v
	}
	return nil
}

func applyAssign(s *State, c *Assign) error {
	// Validate all epochs first so the decision applies whole or not at all.
	check := ledger.New()
	check.Assignments = maps.Clone(s.Ledger.Assignments)
	for _, p := range c.Partitions {
		if err := check.Assign(p.TopicPartition, p.Assignment); err != nil {
			return fmt.Errorf("assigning partitions: %w", err)
		}
	}
	for _, cm := range c.Committers {
		cur, ok := s.Committers[cm.Table]
		if ok && (cm.Epoch < cur.Epoch || (cm.Epoch == cur.Epoch && cm.Node != cur.Node)) {
			return fmt.Errorf("assigning committer of %s at epoch %d (current %d): %w",
				ledger.DisplayName(cm.Table), cm.Epoch, cur.Epoch, ErrStaleCommitter)
		}
	}
	s.Ledger.Assignments = check.Assignments
	for _, cm := range c.Committers {
		s.Committers[cm.Table] = cm.Assignment
	}
	return nil
}
