package fsm

import (
	"encoding/json"
	"fmt"

	"github.com/floe-io/floe/internal/ledger"
)

// commands is the one table of command types: each type's name, the
// protocol level that introduced it (since, see version.go), whether an
// older node may skip it (ignorable), its apply function and the tables an
// entry of it touches (for WatchTable). It is built once from a literal
// list, so every command is registered in one place; a type or name listed
// twice panics at start-up. A type missing here was written by a newer
// node: skipped when its entry carries the ignorable bit, else the FSM
// halts (upgrade required).
//
// ignorable: an entry whose loss on an older node leaves that node's
// decisions right. Only informational records qualify; anything that moves
// data, offsets, epochs, membership or a table's control state must be
// applied by every replica or none.
//
// since: commands 1..15 are known to every build a rolling upgrade may
// start from (the oldest, TestMixedVersions' old build, predates
// ResumeTable). Commands 16..22 came later at the same level (builds before
// proposal ids register nothing that tells them apart), so they need
// ProtocolProposalIDs, the first level whose every build knows them.
var commands = buildCommands(
	// Membership: the minimum protocol level and the placement read it.
	command(CmdRegisterNode, "RegisterNode", ProtocolBase, mustApply, applyRegisterNode, nil),
	// Catalog of record: a skipped namespace or table change splits the catalogs.
	command(CmdCreateNamespace, "CreateNamespace", ProtocolBase, mustApply, applyCreateNamespace, nil),
	command(CmdDropNamespace, "DropNamespace", ProtocolBase, mustApply, applyDropNamespace, nil),
	command(CmdUpdateNamespace, "UpdateNamespace", ProtocolBase, mustApply, applyUpdateNamespace, nil),
	command(CmdCreateTable, "CreateTable", ProtocolBase, mustApply, applyCreateTable, func(_ *State, c *CreateTable) touched { return tables(ledger.TableKey(c.Ident)) }),
	command(CmdDropTable, "DropTable", ProtocolBase, mustApply, applyDropTable, func(_ *State, c *DropTable) touched { return tables(ledger.TableKey(c.Ident)) }),
	// The ledger and its fencing: exactly-once rests on every replica holding the same entries, offsets and epochs.
	command(CmdRecordFiles, "RecordFiles", ProtocolBase, mustApply, applyRecordFiles, func(_ *State, c *RecordFiles) touched { return tables(c.Table) }),
	command(CmdCommitTables, "CommitTables", ProtocolBase, mustApply, applyCommitTables, touchesCommit),
	command(CmdRegisterSources, "RegisterSources", ProtocolBase, mustApply, applyRegisterSources, touchesSources),
	command(CmdAssign, "Assign", ProtocolBase, mustApply, applyAssign, touchesAssign),
	command(CmdDrainNode, "DrainNode", ProtocolBase, mustApply, applyDrainNode, nil),
	command(CmdRemoveNode, "RemoveNode", ProtocolBase, mustApply, applyRemoveNode, nil),
	command(CmdRestoreState, "RestoreState", ProtocolBase, mustApply, applyRestoreState, func(*State, *RestoreState) touched { return touched{all: true} }),
	// Informational: a node without the record shows an older sync and, as
	// committer, mirrors the table again from its own view (a sync moves
	// the external catalog forward only; the next CatalogSynced repairs it).
	command(CmdCatalogSynced, "CatalogSynced", ProtocolBase, mayIgnore, applyCatalogSynced, func(_ *State, c *CatalogSynced) touched { return tables(c.Table) }),
	// Informational: a node without it shows an older backup's age.
	command(CmdBackupWritten, "BackupWritten", ProtocolBase, mayIgnore, applyBackupWritten, nil),
	// Operator and schema control: a skipped resume, pause, rewind or
	// schema request leaves that node's pipelines apart from the others'.
	// Level 2: a build of level 1 may predate them.
	command(CmdResumeTable, "ResumeTable", ProtocolProposalIDs, mustApply, applyResumeTable, func(_ *State, c *ResumeTable) touched { return tables(c.Table) }),
	command(CmdRequestSchema, "RequestSchema", ProtocolProposalIDs, mustApply, applyRequestSchema, func(_ *State, c *RequestSchema) touched { return tables(c.Table) }),
	command(CmdSchemaApplied, "SchemaApplied", ProtocolProposalIDs, mustApply, applySchemaApplied, func(_ *State, c *SchemaApplied) touched { return tables(c.Table) }),
	command(CmdPutMapping, "PutMapping", ProtocolProposalIDs, mustApply, applyPutMapping, nil),
	command(CmdDeleteMapping, "DeleteMapping", ProtocolProposalIDs, mustApply, applyDeleteMapping, nil),
	command(CmdPauseTable, "PauseTable", ProtocolProposalIDs, mustApply, applyPauseTable, func(_ *State, c *PauseTable) touched { return tables(c.Table) }),
	command(CmdRewindTable, "RewindTable", ProtocolProposalIDs, mustApply, applyRewindTable, func(_ *State, c *RewindTable) touched { return tables(c.Table) }),
)

// Values of a row's ignorable column, named so each row reads as a decision.
const (
	mustApply = false
	mayIgnore = true
)

// touched names the tables an entry may change: all of them, or those keys.
// Membership, namespace, mapping and backup commands touch no table; their
// watchers use the global Watch.
type touched struct {
	all  bool
	keys []string
}

func tables(keys ...string) touched { return touched{keys: keys} }

// commandDef is one row of the command table.
type commandDef struct {
	typ  CommandType
	name string
	// since is the protocol level that introduced the command: proposers
	// refuse it until every member registered at least that level (Gate).
	since int
	// ignorable: entries are framed with IgnorableFlag (once every member
	// understands it), so a node that does not know the type skips them
	// instead of halting.
	ignorable bool
	// apply decodes the payload and applies it; it reports the tables the
	// entry touches, computed from the state before the change.
	apply func(s *State, payload []byte) (touched, error)
}

// command makes a row from a typed apply function. touches may be nil: the
// command changes no table's state. Both must be deterministic: same state
// and payload, same result, on every node.
func command[C any](typ CommandType, name string, since int, ignorable bool, apply func(*State, *C) error, touches func(*State, *C) touched) commandDef {
	return commandDef{typ: typ, name: name, since: since, ignorable: ignorable, apply: func(s *State, payload []byte) (touched, error) {
		c := new(C)
		if err := json.Unmarshal(payload, c); err != nil {
			return touched{}, fmt.Errorf("decoding %T: %w", *c, err)
		}
		var t touched
		if touches != nil {
			t = touches(s, c)
		}
		return t, apply(s, c)
	}}
}

func buildCommands(defs ...commandDef) map[CommandType]commandDef {
	out := make(map[CommandType]commandDef, len(defs))
	names := map[string]bool{}
	for _, d := range defs {
		if d.typ&IgnorableFlag != 0 || d.typ == 0 || d.since < ProtocolBase {
			panic(fmt.Sprintf("fsm: command %d (%s): type must be 1..127 and since at least %d", d.typ, d.name, ProtocolBase))
		}
		if _, dup := out[d.typ]; dup || names[d.name] {
			panic(fmt.Sprintf("fsm: command %d (%s) registered twice", d.typ, d.name))
		}
		out[d.typ], names[d.name] = d, true
	}
	return out
}

func (t CommandType) String() string {
	if d, ok := commands[t&^IgnorableFlag]; ok {
		return d.name
	}
	return fmt.Sprintf("unknown(%d)", uint8(t))
}

// Known reports whether this build applies commands of type t (the
// ignorable bit aside).
func Known(t CommandType) bool {
	_, ok := commands[t&^IgnorableFlag]
	return ok
}

// touchesCommit: every swapped table (a dead-letter table moves with its
// table) and the ledger's table.
func touchesCommit(_ *State, c *CommitTables) touched {
	t := touched{}
	if c.Table != "" {
		t.keys = append(t.keys, c.Table)
	}
	for _, sw := range c.Swaps {
		t.keys = append(t.keys, sw.Table)
	}
	return t
}

// touchesSources: the tables the topics route into, before and after (a
// topic can move to another table).
func touchesSources(s *State, c *RegisterSources) touched {
	t := touched{}
	for _, src := range c.Sources {
		t.keys = append(t.keys, src.Table)
		if cur, ok := s.Sources[src.Topic]; ok && cur.Table != src.Table {
			t.keys = append(t.keys, cur.Table)
		}
	}
	return t
}

// touchesAssign: committer roles name their tables; partitions reach their
// tables through the sources. A partition of a topic no source routes is
// unusual (the controller assigns registered sources): wake every table
// rather than miss one.
func touchesAssign(s *State, c *Assign) touched {
	t := touched{}
	for _, cm := range c.Committers {
		t.keys = append(t.keys, cm.Table)
	}
	for _, p := range c.Partitions {
		src, ok := s.Sources[p.Topic]
		if !ok {
			return touched{all: true}
		}
		t.keys = append(t.keys, src.Table)
	}
	return t
}
