package profiling

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// StartCPU profiles the whole process into path until the returned
// stop is called (floe serve --cpuprofile: the real-broker benchmark
// profiles a node under load this way, without a pprof listener on the
// admin port).
func StartCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating the CPU profile %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the CPU profile %s: %w", path, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// WriteHeap writes the live heap, after a collection, to path
// (floe serve --memprofile, written when the node is told to stop, before
// it drains: `floe bench --tables` finds what a table holds this way).
func WriteHeap(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("creating the heap profile %s: %w", path, err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		return fmt.Errorf("writing the heap profile %s: %w", path, err)
	}
	return f.Close()
}
