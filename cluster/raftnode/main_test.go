package raftnode

import (
	"testing"

	"github.com/floe-io/floe/internal/testing/leak"
)

func TestMain(m *testing.M) { leak.VerifyTestMain(m) }
