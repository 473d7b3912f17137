package fabric

import "testing"

// TestCountsCompareAcrossWraps: the comparison of a counter's reading
// with the operations issued holds where the sockets provider's 32-bit
// counters go negative (2^31, read sign-extended) and where they wrap
// (2^32, read from 0), and for 64-bit counters. A plain count >= want
// said that 0xffffffff80000000 had reached 2^31+5 (Quiet returned with
// five operations outstanding) and that 3 had not reached 2^32+3 (Quiet
// waited for its timeout).
func TestCountsCompareAcrossWraps(t *testing.T) {
	const neg = 0xffffffff00000000 // the sign extension of a negative int32
	for _, c := range []struct {
		count, want uint64
		reached     bool
		short       uint64
	}{
		{0, 0, true, 0},
		{4, 5, false, 1},
		{5, 5, true, 0},
		{1<<31 - 1, 1<<31 - 1, true, 0},
		{neg | 1<<31, 1<<31 + 5, false, 5},      // 32-bit counter past 2^31, five short
		{neg | (1<<31 + 5), 1<<31 + 5, true, 0}, // and complete
		{1<<31 + 5, 1<<31 + 5, true, 0},         // 64-bit counter there
		{neg | (1<<32 - 2), 1<<32 + 3, false, 5},
		{3, 1<<32 + 3, true, 0},          // 32-bit counter past 2^32
		{1<<32 + 3, 1<<32 + 3, true, 0},  // 64-bit counter there
		{1<<32 + 2, 1<<32 + 3, false, 1}, // 64-bit counter one short
		{2, 1<<32 + 3, false, 1},         // 32-bit counter one short
		{1 << 40, 1<<40 + 1<<30, false, 1 << 30},
	} {
		if got := reached(c.count, c.want); got != c.reached {
			t.Errorf("reached(%#x, %#x) = %v, want %v", c.count, c.want, got, c.reached)
		}
		if got := short(c.count, c.want); got != c.short {
			t.Errorf("short(%#x, %#x) = %d, want %d", c.count, c.want, got, c.short)
		}
	}
}
