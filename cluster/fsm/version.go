package fsm

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Version gating, Nomad's way (its structs.IgnoreUnknownTypeFlag). Two
// mechanisms keep nodes of different builds from parting during a rolling
// upgrade:
//
//   - The proposer gates: every build has a protocol level (ProtocolLevel)
//     that each member registers (Member.Protocol); a command is proposed
//     only when its level (the table's since) is at most the minimum level
//     of the registered members (Gate). So a command reaches the log only
//     once every member knows it.
//   - The FSM halts: an entry of a type this build does not know is skipped
//     only when its type byte carries IgnorableFlag; otherwise the FSM
//     stops applying (upgrade required) rather than diverge, and an
//     operator restarts the node on a newer build, which replays the log.
//     The halt catches what the gate cannot see: a member that joins and
//     has not registered yet, a node restarted on an older build.

// IgnorableFlag is the high bit of the type byte: a node that does not know
// the type may skip the entry. Command types are 1..127.
const IgnorableFlag CommandType = 128

// Protocol levels. A level, once released, keeps its meaning; a new
// command or a new framing of the log takes the next one.
const (
	// ProtocolBase: builds before proposal ids, whose members register
	// neither protocol nor proposal_ids. All know commands 1..15; the later
	// ones among them (up to the release tagged good-15) also 16..22, but
	// nothing in their records tells them apart.
	ProtocolBase = 1
	// ProtocolProposalIDs: builds that deduplicate proposals by id; their
	// members register proposal_ids but no protocol. They know 1..22.
	ProtocolProposalIDs = 2
	// ProtocolGating: builds that strip IgnorableFlag and halt on an unknown
	// entry without it, and register protocol.
	ProtocolGating = 3
	// ProtocolTableSettings: builds that know the table settings which
	// change what a committer writes (TableSpec.Level): an older node would
	// drop their keys from a mapping and write the table its old way, so a
	// mapping that sets one is proposed only once every member is here.
	ProtocolTableSettings = 4
	// ProtocolPartitionedUpsert: builds that write a partitioned upsert
	// table's position deletes one file per partition. An older committer
	// would write them unpartitioned, which readers apply to no data file
	// of a partition: every replaced row would stay live.
	ProtocolPartitionedUpsert = 5
	// ProtocolGzipMetadata: builds that read gzip-compressed metadata files
	// (<v>-<uuid>.gz.metadata.json). An older node would fail to parse one,
	// so a table's first gzip file is written, and a pointer to one
	// proposed, only once every member is here.
	ProtocolGzipMetadata = 6
	// ProtocolOperatorDrain: builds that tell an operator's drain mark
	// from the process's own (DrainNode.Operator, Member.DrainedByOperator)
	// and keep the operator's across a restart. An older member would drop
	// the field, and its replica of the membership would part from the
	// others', so the mark is sent only once every member is here.
	ProtocolOperatorDrain = 7
	// ProtocolLevel is this build's level.
	ProtocolLevel = ProtocolOperatorDrain
)

// leveled is a command whose content may need a higher protocol level than
// its type does: a PutMapping whose table sets a newer setting.
type leveled interface {
	contentLevel() int
}

// Level returns the member's protocol level: the one it registered, or for
// a member of a build before the field, what its other fields imply.
func (m *Member) Level() int {
	switch {
	case m.Protocol > 0:
		return m.Protocol
	case m.ProposalIDs:
		return ProtocolProposalIDs
	}
	return ProtocolBase
}

// MinProtocol returns the lowest protocol level among the registered
// members: a pure function of the replicated membership, so every replica
// derives the same. With no member registered it returns this build's
// level (the proposer counts its own level besides, see Gate).
func (s *State) MinProtocol() int {
	lowest := ProtocolLevel
	for _, m := range s.Nodes {
		lowest = min(lowest, m.Level())
	}
	return lowest
}

// ProtocolError refuses a proposal that a registered member's build may not
// know. It wraps ErrProtocolTooLow.
type ProtocolError struct {
	Command string
	Needs   int // the command's level
	Minimum int // the group's minimum level
	// Lagging are the members below Needs with their levels, "id at level n".
	Lagging []string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%s needs protocol level %d; the group's minimum is %d (lagging: %s): finish the rolling upgrade first",
		e.Command, e.Needs, e.Minimum, strings.Join(e.Lagging, ", "))
}

func (e *ProtocolError) Unwrap() error { return ErrProtocolTooLow }

// Halt is where an FSM stopped: the first entry of a type this build does
// not know that was not marked ignorable.
type Halt struct {
	Index uint64
	Type  CommandType // without the ignorable bit
}

func (h Halt) Error() string {
	return fmt.Sprintf("upgrade required: log entry %d has command type %d, unknown to this build (protocol level %d); restart the node on a newer build (it also resumes by itself once the leader's state holds nothing this build cannot read)",
		h.Index, uint8(h.Type), ProtocolLevel)
}

// Unwrap makes errors.Is(err, ErrUpgradeRequired) answer for a halt.
func (h Halt) Unwrap() error { return ErrUpgradeRequired }

// Option adjusts an FSM's command table; tests use it to stand in for
// builds of other levels.
type Option func(map[CommandType]commandDef)

// Without drops command types from the table, as a build older than them.
func Without(types ...CommandType) Option {
	return func(m map[CommandType]commandDef) {
		for _, t := range types {
			delete(m, t)
		}
	}
}

// WithLevel sets the protocol level command type t needs, as a build where
// t came at that level.
func WithLevel(t CommandType, level int) Option {
	return func(m map[CommandType]commandDef) {
		if d, ok := m[t]; ok {
			d.since = level
			m[t] = d
		}
	}
}

// splitType returns the command type of an entry's first byte and whether
// the entry may be skipped by a node that does not know the type.
func splitType(b byte) (CommandType, bool) {
	t := CommandType(b)
	return t &^ IgnorableFlag, t&IgnorableFlag != 0
}

// Gate checks that a command of type t may be proposed now by a build with
// this FSM's table: known here, and its level at most the group's minimum
// protocol level. It returns that minimum, which says how to frame the
// command (EncodeFor). self is the proposer's own level, counted whether or
// not its registration is applied yet.
func (f *FSM) Gate(t CommandType, self int) (int, error) {
	def, ok := f.table[t]
	if !ok {
		return 0, fmt.Errorf("proposing command type %d: %w", uint8(t), ErrUnknownCommand)
	}
	return f.gate(def.name, def.since, self)
}

// GateCommand is Gate for a command whose content may raise its level (a
// mapping that sets a newer table setting): it needs the higher of its
// type's level and its content's.
func (f *FSM) GateCommand(c Command, self int) (int, error) {
	def, ok := f.table[c.Type()]
	if !ok {
		return 0, fmt.Errorf("proposing command type %d: %w", uint8(c.Type()), ErrUnknownCommand)
	}
	needs := def.since
	if l, ok := c.(leveled); ok {
		needs = max(needs, l.contentLevel())
	}
	return f.gate(def.name, needs, self)
}

func (f *FSM) gate(name string, needs, self int) (int, error) {
	var (
		lowest  int
		lagging []string
	)
	f.Read(func(s *State) {
		lowest = s.MinProtocol()
		for _, id := range slices.Sorted(maps.Keys(s.Nodes)) {
			if lv := s.Nodes[id].Level(); lv < needs {
				lagging = append(lagging, fmt.Sprintf("%s at level %d", id, lv))
			}
		}
	})
	lowest = min(lowest, self)
	if self < needs {
		lagging = append(lagging, fmt.Sprintf("this node at level %d", self))
	}
	if lowest < needs {
		return lowest, &ProtocolError{Command: name, Needs: needs, Minimum: lowest, Lagging: lagging}
	}
	return lowest, nil
}

// EncodeFor frames c for a group whose minimum protocol level is level,
// with proposal id id ("" for none). The ignorable bit is set only from
// ProtocolGating on: a build below it reads the flagged byte as an unknown
// type and would skip a command it knows. The proposal id is attached only
// from ProtocolProposalIDs on (see proposals.go).
func EncodeFor(level int, id string, c Command) ([]byte, error) {
	if id != "" && level < ProtocolProposalIDs {
		return nil, fmt.Errorf("encoding %s: proposal ids need protocol level %d, the group is at %d", c.Type(), ProtocolProposalIDs, level)
	}
	var (
		data []byte
		err  error
	)
	if id == "" {
		data, err = encodePlain(c)
	} else {
		data, err = encodeProposal(id, c)
	}
	if err != nil {
		return nil, err
	}
	if def, ok := commands[c.Type()]; ok && def.ignorable && level >= ProtocolGating {
		data[0] |= byte(IgnorableFlag)
	}
	return data, nil
}
