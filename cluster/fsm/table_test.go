package fsm

import "testing"

// TestDuplicateCommandPanics: a type (or name) registered twice is a
// programming error caught at start-up, not a silent override.
func TestDuplicateCommandPanics(t *testing.T) {
	for name, defs := range map[string][]commandDef{
		"same type": {command(CmdRemoveNode, "RemoveNode", ProtocolBase, mustApply, applyRemoveNode, nil), command(CmdRemoveNode, "Other", ProtocolBase, mustApply, applyRemoveNode, nil)},
		"same name": {command(CmdRemoveNode, "RemoveNode", ProtocolBase, mustApply, applyRemoveNode, nil), command(CommandType(99), "RemoveNode", ProtocolBase, mustApply, applyRemoveNode, nil)},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered twice without a panic", name)
				}
			}()
			buildCommands(defs...)
		}()
	}
}
