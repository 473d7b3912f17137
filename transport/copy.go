package transport

import "unsafe"

// Copy copies src into dst (len(dst) >= len(src) is the caller's check) as
// fast as this machine class allows for the sizes PEs move between mapped
// heaps. Two measured facts shape it (transport/copy_test.go's
// BenchmarkCopy; a 32 MiB-L3 AMD EPYC with ERMS and FSRM):
//
//   - From about 32 KiB, Go's memmove (an AVX loop) runs at 65-75% of the
//     CPU's own string copy, REP MOVSB, which glibc (and so OSHMEM) uses at
//     those sizes: 64 KiB 100 vs 135 GB/s, 1-4 MiB 43 vs 62-71 GB/s. Where
//     the CPU reports ERMS (fast REP MOVSB), copies from repCopyMin to
//     cachedCopyMax are one REP MOVSB (copy_amd64.s).
//   - Go's memmove switches to non-temporal stores at 1 MiB, 20-30% slower
//     than cached stores for data that fits the last-level cache, while
//     glibc keeps cached stores up to about three quarters of it. Without
//     ERMS, copies up to cachedCopyMax go in pieces below that switch;
//     beyond it the non-temporal stores win (16 MiB: 19 vs 17 GB/s) and
//     the copy is one call.
//
// Overlapping src and dst take one memmove, which alone copies them right
// (neither the string copy nor the pieces do).
func Copy(dst, src []byte) {
	n := len(src)
	switch {
	case n < repCopyMin || n > cachedCopyMax || overlap(dst[:n], src):
		copy(dst, src)
	case fastRepCopy:
		dst = dst[:n]
		raceCopy(dst, src)
		repCopy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), uintptr(n))
	case n < copyPiece:
		copy(dst, src)
	default:
		dst = dst[:n]
		for off := 0; off < n; off += copyPiece {
			end := min(off+copyPiece, n)
			copy(dst[off:end], src[off:end])
		}
	}
}

// overlap reports whether a and b (of equal, non-zero length) share bytes.
func overlap(a, b []byte) bool {
	pa, pb := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return pa < pb+uintptr(len(b)) && pb < pa+uintptr(len(a))
}

const (
	// repCopyMin is where REP MOVSB overtakes memmove (below it memmove's
	// loop, which fits the L1 cache, is as fast or faster).
	repCopyMin = 32 << 10
	// copyPiece is below memmove's 1 MiB non-temporal switch.
	copyPiece = 512 << 10
	// cachedCopyMax is the largest copy kept in cached stores: its source
	// and destination fill half of a 32 MiB last-level cache.
	cachedCopyMax = 8 << 20
)
