// Package logbuf is a log sink for tests: a buffer that a node's goroutines
// write their log lines to while the test reads them, for the tests that look
// for a refusal, a start line or a leaked secret in what a node logged.
package logbuf
