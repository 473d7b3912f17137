package transport

import "unsafe"

// Copy copies src into dst (len(dst) >= len(src) is the caller's check) as
// fast as this machine class allows for the sizes PEs move between mapped
// heaps. Three measured facts shape it (transport/copy_test.go's
// BenchmarkCopy; a 32 MiB-L3 AMD EPYC with ERMS and FSRM):
//
//   - In one process, with the same buffers copied again and again, Go's
//     memmove (an AVX loop) runs at 65-75% of the CPU's own string copy,
//     REP MOVSB, from about 32 KiB: 64 KiB 100 vs 135 GB/s, 1-4 MiB 43 vs
//     62-71 GB/s. Between processes, a put's copy into the peer's mapping,
//     it is the other way below 512 KiB: in shmem-perf's put (paired
//     rounds against OSHMEM, 2 PEs; bench/NOTES.md, session 12), memmove
//     gave 1.03, 1.09, 1.07, 1.04 times OSHMEM's bandwidth at 32, 64, 128,
//     256 KiB and REP MOVSB 0.96, 0.94, 0.92, 0.91; at 512 KiB the two
//     were equal, and at 1-4 MiB REP MOVSB led memmove in pieces by 4-10%
//     and one non-temporal memmove by 20-30% (session 13). So where the CPU reports ERMS (fast REP MOVSB), copies
//     from repCopyMin to cachedCopyMax are one REP MOVSB (copy_amd64.s),
//     and smaller ones memmove.
//   - REP MOVSB drops to about 3 GB/s, a tenth of memmove, when the
//     destination starts 1-31 bytes after the source modulo 4 KiB (the
//     CPU takes the store to dst for one to the source's next line: 4 KiB
//     aliasing). glibc guards only distances under 64 bytes modulo 4 GiB,
//     so OSHMEM's puts of 4-256 KiB run at 3 GB/s on this machine. Copies
//     whose distance falls within 64 bytes of that take the other path.
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
	case fastRepCopy && !pageAliased(dst, src):
		dst = dst[:n]
		raceCopy(dst, src)
		repCopy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), uintptr(n))
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

// pageAliased reports whether dst starts less than 64 bytes after src
// modulo 4 KiB (but not at the same offset), where REP MOVSB is slow.
func pageAliased(dst, src []byte) bool {
	d := (uintptr(unsafe.Pointer(&dst[0])) - uintptr(unsafe.Pointer(&src[0]))) % 4096
	return d != 0 && d < 64
}

const (
	// copyPiece is below memmove's 1 MiB non-temporal switch.
	copyPiece = 512 << 10
	// repCopyMin is where REP MOVSB catches up with memmove on copies
	// between processes' mappings (see Copy). Smaller copies are one
	// memmove, so without REP MOVSB the pieces start there too.
	repCopyMin = copyPiece
	// cachedCopyMax is the largest copy kept in cached stores: its source
	// and destination fill half of a 32 MiB last-level cache.
	cachedCopyMax = 8 << 20
)
