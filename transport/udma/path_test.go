package udma

import (
	"bytes"
	"sync/atomic"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// TestPathLargeTransfers moves sizes around transport.Copy's piece size
// through a path to a second mapping of a segment and reads them back
// through the first: every byte lands, none beside the target range.
func TestPathLargeTransfers(t *testing.T) {
	job := testJob(t)
	const heap = 4 << 20
	s := mustCreate(t, job, 0, heap)
	peer := mustOpen(t, job, 0, heap)
	var fence atomic.Uint64
	p := NewPath(peer.Heap(), s.Bell(), &fence, true)
	for _, n := range []int{8, 4095, 512 << 10, 512<<10 + 1, 3<<20 + 17} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*13 + n)
		}
		clear(s.Heap())
		const off = 64
		if err := p.Put(off, src); err != nil {
			t.Fatal(err)
		}
		mem := s.Heap()
		if !bytes.Equal(mem[off:off+n], src) {
			t.Fatalf("put of %d bytes differs", n)
		}
		if bytes.Count(mem[:off], []byte{0}) != off || bytes.Count(mem[off+n:], []byte{0}) != heap-off-n {
			t.Fatalf("put of %d bytes wrote outside its range", n)
		}
		got := make([]byte, n)
		if err := p.Get(got, off); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("get of %d bytes differs", n)
		}
		const sig = heap - 8
		if err := p.PutSignal(off, src[:n/2], sig, uint64(n), transport.SignalSet); err != nil {
			t.Fatal(err)
		}
		if transport.Load64(mem, sig) != uint64(n) {
			t.Fatalf("signal after a put of %d bytes is %d", n/2, transport.Load64(mem, sig))
		}
	}
}
