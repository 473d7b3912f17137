package transport

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"
)

func TestCopy(t *testing.T) {
	for _, n := range []int{0, 1, 7, repCopyMin - 1, repCopyMin, repCopyMin + 13, copyPiece - 1, copyPiece, copyPiece + 3, 3*copyPiece + 5, cachedCopyMax, cachedCopyMax + 1} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*31 + i>>9)
		}
		dst := make([]byte, n+16)
		for i := range dst {
			dst[i] = 0xEE
		}
		Copy(dst[8:], src)
		if !bytes.Equal(dst[8:8+n], src) {
			t.Fatalf("%d bytes: copy differs", n)
		}
		if !bytes.Equal(dst[:8], bytes.Repeat([]byte{0xEE}, 8)) || !bytes.Equal(dst[8+n:], bytes.Repeat([]byte{0xEE}, 8)) {
			t.Fatalf("%d bytes: wrote outside the destination", n)
		}
	}
}

// TestCopyOverlapping: overlapping ranges copy as memmove does, either
// way round, at sizes the string copy would otherwise take.
func TestCopyOverlapping(t *testing.T) {
	for _, n := range []int{repCopyMin, repCopyMin + 5, 3 * copyPiece} {
		for _, shift := range []int{-4096, -1, 1, 4096} {
			buf := make([]byte, n+8192)
			for i := range buf {
				buf[i] = byte(i*7 + i>>11)
			}
			want := append([]byte(nil), buf...)
			src, dst := 4096, 4096+shift
			copy(want[dst:dst+n], want[src:src+n])
			Copy(buf[dst:dst+n], buf[src:src+n])
			if !bytes.Equal(buf, want) {
				t.Fatalf("%d bytes shifted by %d: differs from memmove", n, shift)
			}
		}
	}
}

// BenchmarkCopy compares Copy with a single copy at sizes around the
// string copy's start (repCopyMin) and memmove's non-temporal switch; run
// it where the heaps live (go test -bench Copy).
func BenchmarkCopy(b *testing.B) {
	for _, n := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20} {
		src, dst := make([]byte, n), make([]byte, n)
		for i := range src { // else every read hits the zero page
			src[i], dst[i] = byte(i), byte(i>>8)
		}
		b.Run(fmt.Sprintf("%dKiB/Copy", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				Copy(dst, src)
			}
		})
		// The destination 8 bytes after the source modulo 4 KiB: where
		// REP MOVSB is slow and Copy must not take it.
		aliased := make([]byte, n+8192)
		shift := (int(uintptr(unsafe.Pointer(&src[0]))) - int(uintptr(unsafe.Pointer(&aliased[0]))) + 8) & 4095
		b.Run(fmt.Sprintf("%dKiB/CopyAliased", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				Copy(aliased[shift:shift+n], src)
			}
		})
		b.Run(fmt.Sprintf("%dKiB/copy", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				copy(dst, src)
			}
		})
	}
}

// TestPageAliased: the distances at which Copy avoids REP MOVSB, and that
// copies at every distance around them are still exact.
func TestPageAliased(t *testing.T) {
	buf := make([]byte, 3*repCopyMin+8192)
	for i := range buf {
		buf[i] = byte(i*13 + i>>10)
	}
	for _, d := range []int{0, 1, 8, 31, 63, 64, 65, 4095, 4096, 4097, 4096 + 40} {
		src := buf[:repCopyMin]
		dst := make([]byte, repCopyMin+d+8192)
		// Align dst's start to src's modulo 4 KiB, then shift it by d.
		shift := (int(uintptr(unsafe.Pointer(&src[0]))) - int(uintptr(unsafe.Pointer(&dst[0]))) + d) & 4095
		shift += d &^ 4095
		to := dst[shift : shift+repCopyMin]
		got := pageAliased(to, src)
		want := d%4096 != 0 && d%4096 < 64
		if got != want {
			t.Errorf("distance %d: pageAliased = %v, want %v", d, got, want)
		}
		Copy(to, src)
		if !bytes.Equal(to, src) {
			t.Fatalf("distance %d: copy differs", d)
		}
	}
}
