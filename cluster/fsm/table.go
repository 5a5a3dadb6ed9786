package fsm

import (
	"encoding/json"
	"fmt"

	"github.com/floe-io/floe/ledger"
)

// commands is the one table of command types: each type's name, its apply
// function and the tables an entry of it touches (for WatchTable). It is
// built once from a literal list, so every command is registered in one
// place; a type or name listed twice panics at start-up. Types missing here
// are skipped by the FSM (written by a newer node).
var commands = buildCommands(
	command(CmdRegisterNode, "RegisterNode", applyRegisterNode, nil),
	command(CmdCreateNamespace, "CreateNamespace", applyCreateNamespace, nil),
	command(CmdDropNamespace, "DropNamespace", applyDropNamespace, nil),
	command(CmdUpdateNamespace, "UpdateNamespace", applyUpdateNamespace, nil),
	command(CmdCreateTable, "CreateTable", applyCreateTable, func(_ *State, c *CreateTable) touched { return tables(ledger.TableKey(c.Ident)) }),
	command(CmdDropTable, "DropTable", applyDropTable, func(_ *State, c *DropTable) touched { return tables(ledger.TableKey(c.Ident)) }),
	command(CmdRecordFiles, "RecordFiles", applyRecordFiles, func(_ *State, c *RecordFiles) touched { return tables(c.Table) }),
	command(CmdCommitTables, "CommitTables", applyCommitTables, touchesCommit),
	command(CmdRegisterSources, "RegisterSources", applyRegisterSources, touchesSources),
	command(CmdAssign, "Assign", applyAssign, touchesAssign),
	command(CmdDrainNode, "DrainNode", applyDrainNode, nil),
	command(CmdRemoveNode, "RemoveNode", applyRemoveNode, nil),
	command(CmdRestoreState, "RestoreState", applyRestoreState, func(*State, *RestoreState) touched { return touched{all: true} }),
	command(CmdCatalogSynced, "CatalogSynced", applyCatalogSynced, func(_ *State, c *CatalogSynced) touched { return tables(c.Table) }),
	command(CmdBackupWritten, "BackupWritten", applyBackupWritten, nil),
	command(CmdResumeTable, "ResumeTable", applyResumeTable, func(_ *State, c *ResumeTable) touched { return tables(c.Table) }),
	command(CmdRequestSchema, "RequestSchema", applyRequestSchema, func(_ *State, c *RequestSchema) touched { return tables(c.Table) }),
	command(CmdSchemaApplied, "SchemaApplied", applySchemaApplied, func(_ *State, c *SchemaApplied) touched { return tables(c.Table) }),
	command(CmdPutMapping, "PutMapping", applyPutMapping, nil),
	command(CmdDeleteMapping, "DeleteMapping", applyDeleteMapping, nil),
	command(CmdPauseTable, "PauseTable", applyPauseTable, func(_ *State, c *PauseTable) touched { return tables(c.Table) }),
	command(CmdRewindTable, "RewindTable", applyRewindTable, func(_ *State, c *RewindTable) touched { return tables(c.Table) }),
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
	// apply decodes the payload and applies it; it reports the tables the
	// entry touches, computed from the state before the change.
	apply func(s *State, payload []byte) (touched, error)
}

// command makes a row from a typed apply function. touches may be nil: the
// command changes no table's state. Both must be deterministic: same state
// and payload, same result, on every node.
func command[C any](typ CommandType, name string, apply func(*State, *C) error, touches func(*State, *C) touched) commandDef {
	return commandDef{typ: typ, name: name, apply: func(s *State, payload []byte) (touched, error) {
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
		if _, dup := out[d.typ]; dup || names[d.name] {
			panic(fmt.Sprintf("fsm: command %d (%s) registered twice", d.typ, d.name))
		}
		out[d.typ], names[d.name] = d, true
	}
	return out
}

func (t CommandType) String() string {
	if d, ok := commands[t]; ok {
		return d.name
	}
	return fmt.Sprintf("unknown(%d)", uint8(t))
}

// Known reports whether this version applies commands of type t; an entry
// of another type is skipped (counted in State.Skipped).
func Known(t CommandType) bool {
	_, ok := commands[t]
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
