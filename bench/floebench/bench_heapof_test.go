package floebench

import (
	"runtime"
	"testing"
)

var heapOfSink [][]byte

//go:noinline
func allocForHeapOfTest() {
	for range 8192 {
		heapOfSink = append(heapOfSink, make([]byte, 8<<10))
	}
}

// TestHeapOf: the live heap allocated under a function is found by its
// name (64 MiB of 8 KiB objects: about 130 samples at the default rate,
// so within a few standard deviations of the sampling), and not under
// another name.
func TestHeapOf(t *testing.T) {
	heapOfSink = nil
	allocForHeapOfTest()
	runtime.GC()
	if got := heapOf("allocForHeapOfTest"); got < 40<<20 || got > 96<<20 {
		t.Fatalf("heapOf found %d bytes under allocForHeapOfTest, want about 64 MiB", got)
	}
	if got := heapOf("noSuchFunctionAnywhere"); got != 0 {
		t.Fatalf("heapOf found %d bytes under no function", got)
	}
	heapOfSink = nil
}
