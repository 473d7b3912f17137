package fabric

// Counts of completions. An endpoint's counters count the operations
// posted on it; a wait compares them with what it issued. libfabric's
// counters are 64-bit in its API, but the sockets provider keeps them in
// an int32 that fi_cntr_read sign-extends: after 2^31 operations on one
// endpoint it reads 0xffffffff80000000, at least any count issued, and
// after 2^32 it reads from 0 again, below every one. So counts are
// compared modulo 2^32 (gf.c's gf_cntr_reached is the same comparison):
// right for 32-bit counters and for 64-bit ones alike while fewer than
// 2^31 operations of an endpoint are outstanding, which its slots and the
// provider's queues keep far below.

// reached reports whether count, the sum of a counter's readings (and the
// operations that will never be counted), has reached want, the number of
// operations issued, modulo 2^32.
func reached(count, want uint64) bool { return int32(uint32(count-want)) >= 0 }

// short returns how many operations count lacks to reach want, modulo
// 2^32: 0 once reached.
func short(count, want uint64) uint64 {
	if reached(count, want) {
		return 0
	}
	return uint64(uint32(want - count))
}
