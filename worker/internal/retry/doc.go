// Package retry is the capped exponential backoff with jitter that every
// loop of the worker (fetchers, flushes, commit loops, catalog sync) waits
// with between attempts. It is internal to worker/ and imports nothing of
// Floe.
package retry
