// Package mirrortest is the conformance suite every catalog mirror passes
// (sinks/glue, sinks/restsync): what Floe promises of a mirror whatever the
// catalog behind it, run against each mirror's fake catalog. Each mirror's
// own tests keep only what is particular to its catalog. Test support:
// production code never imports it (internal/archtest).
package mirrortest
