//go:build race

package core

import "sync/atomic"

// bump is meter_norace.go's, atomic: the race detector checks programs
// with metrics on, and a plain add would be reported as theirs.
func bump(p *uint64, n uint64) uint64 { return atomic.AddUint64(p, n) }

// load reads a counter atomically.
func load(p *uint64) uint64 { return atomic.LoadUint64(p) }
