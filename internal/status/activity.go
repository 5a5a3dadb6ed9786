package status

import "time"

// Activity is what a node did for one table since it started: its counters
// and the times of its last maintenance. The node's runtime status of the
// table (TableStatus) keeps it, and the table's report (TableReport) passes
// it on as it is.
type Activity struct {
	Consumed          int64     `json:"records_consumed"`
	BytesConsumed     int64     `json:"bytes_consumed"`
	DeadLettered      int64     `json:"records_dead_lettered"`
	Skipped           int64     `json:"records_skipped"`
	FilesWritten      int64     `json:"files_written"`
	BytesWritten      int64     `json:"bytes_written"`
	CommitFailures    int64     `json:"commit_failures"`
	SnapshotsExpired  int64     `json:"snapshots_expired"`
	LastExpiry        time.Time `json:"last_expiry,omitzero"`
	OrphansDeleted    int64     `json:"orphan_files_deleted"`
	LastOrphanCleanup time.Time `json:"last_orphan_cleanup,omitzero"`
	// SmallFiles as of the last compaction check, and compaction totals.
	SmallFiles     int       `json:"small_files"`
	Compactions    int64     `json:"compactions"`
	FilesRewritten int64     `json:"files_rewritten"`
	BytesRewritten int64     `json:"bytes_rewritten"`
	LastCompaction time.Time `json:"last_compaction,omitzero"`
	// Tombstones counts records with a null value in decoded formats
	// (ignored, or also dead-lettered with tombstones: dlq).
	Tombstones int64 `json:"records_tombstones"`
	// LastDeadLetters are the newest records this node dead-lettered, with
	// their reasons, newest last (at most MaxLastDeadLetters; AddDeadLetter).
	LastDeadLetters []SuspendedRecord `json:"last_dead_letters,omitempty"`
	// Upsert: an upsert table's counters on its committer (nil otherwise).
	Upsert *UpsertStatus `json:"upsert,omitempty"`
	// DeadLetterDeltaVersion: on the committer of a table that writes a
	// Delta log, the version of its dead-letter table's Delta log that
	// this node last mirrored (nil before the first). Not replicated: the
	// dead-letter log's versions are no offsets anyone resumes from
	// (docs/formats.md, "The dead-letter table").
	DeadLetterDeltaVersion *int64 `json:"dead_letter_delta_version,omitempty"`
}
