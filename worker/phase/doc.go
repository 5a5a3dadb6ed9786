// Package phase spreads a table's periodic work over its period. Every
// table flushes each commit interval and compacts each compaction
// interval; started together (one topic_regex mapping, a node restart),
// hundreds of tables would do it on the same tick, saturating the cores and
// delaying Raft's heartbeats behind the burst, then idling. A table's phase
// is a fixed fraction of the period derived from its name, so the work of
// many tables is spread evenly, and the pipelines of one table on several
// nodes flush at the same moment (wall-clock slots), whose entries the
// committer then takes in one commit.
package phase
