//go:build !race

package core

// bump adds n to a counter of a block and returns the new value. A block
// is written only by the goroutines that use its PE or context, so the
// add is a plain one: an atomic add costs 10-20 ns on the 2-core machines
// goshmem is measured on (a locked instruction that also drains the store
// buffer a put just filled), half an 8-byte put. The price: two goroutines
// using one handle at the same instant may lose an increment (a context
// per goroutine keeps counts exact), and a reader may see a count one
// operation old. Counters are aligned 64-bit words, so a read is never
// torn on the 64-bit platforms goshmem runs on. Under the race detector
// (meter_race.go) the adds are atomic, so a program's races stay its own.
func bump(p *uint64, n uint64) uint64 {
	*p += n
	return *p
}

// load reads a counter another goroutine may be bumping.
func load(p *uint64) uint64 { return *p }
