// Package archtest holds the architecture test: the import rules of
// DESIGN.md's package list, checked against every production file of the
// module, so a change that breaks the layering fails `make test` (Nomad's
// import lint, as a Go test). It has no production code.
package archtest
