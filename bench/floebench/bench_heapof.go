package floebench

import (
	"math"
	"runtime"
	"strings"
)

// heapOf estimates the heap in use by allocations made under a function
// whose name contains one of prefixes (anywhere in the allocation's
// stack), from the runtime's sampled heap profile as of the last GC,
// scaled for the sampling as pprof scales it: what `floe bench
// --upsert-passes` attributes to the key index (bbolt and upsert.Index) at the
// end of a pass, when the rest of the process's heap (kfake's records, the
// node's buffers) moves by more than the index could hold.
func heapOf(prefixes ...string) uint64 {
	var recs []runtime.MemProfileRecord
	for {
		n, ok := runtime.MemProfile(recs, false)
		if ok {
			recs = recs[:n]
			break
		}
		recs = make([]runtime.MemProfileRecord, n+50)
	}
	rate := float64(runtime.MemProfileRate)
	var total float64
	for _, r := range recs {
		objs, bytes := r.InUseObjects(), r.InUseBytes()
		if objs <= 0 || !stackUnder(r.Stack(), prefixes) {
			continue
		}
		scale := 1.0
		if rate > 1 {
			scale = 1 / (1 - math.Exp(-float64(bytes)/float64(objs)/rate))
		}
		total += float64(bytes) * scale
	}
	return uint64(total)
}

func stackUnder(pcs []uintptr, prefixes []string) bool {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		for _, p := range prefixes {
			if strings.Contains(f.Function, p) {
				return true
			}
		}
		if !more {
			return false
		}
	}
}
