// Package profiling writes the CPU and heap profiles that floe serve
// (--cpuprofile, --memprofile) and the benchmarks take.
package profiling
