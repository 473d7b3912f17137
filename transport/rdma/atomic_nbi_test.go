package rdma

import (
	"encoding/binary"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// Non-blocking fetching atomics: each old value is in its own buffer after
// Quiet, in the order issued, for 8- and 4-byte words, directly and
// through a relay.
func TestAtomicNBIFillsAfterQuiet(t *testing.T) {
	w := newWorld(t, 3, 4096, nil)
	for _, tc := range []struct {
		name  string
		path  transport.Path
		width int
		off   uint64
	}{
		{"direct 8", w.path(0, 1), 8, 64},
		{"direct 4", w.path(0, 1), 4, 128},
		{"relayed 8", w.nodes[2].RelayPath(1, 0, w.nodes[0].Addr()), 8, 256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 50
			dsts := make([][8]byte, n)
			nb := tc.path.(transport.AtomicNBIPath)
			for i := range dsts {
				if err := nb.AtomicNBI(transport.AtomicFetchAdd, tc.width, tc.off, 3, 0, dsts[i][:]); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.path.Engine().Quiet(); err != nil {
				t.Fatal(err)
			}
			for i, d := range dsts {
				got := binary.NativeEndian.Uint64(d[:])
				if tc.width == 4 {
					got = uint64(binary.NativeEndian.Uint32(d[:4]))
				}
				if got != uint64(3*i) {
					t.Fatalf("fetch %d: old value %d, want %d", i, got, 3*i)
				}
			}
			if got := transport.Load64(w.heaps[1], tc.off&^7); tc.width == 8 && got != 3*n {
				t.Fatalf("word = %d, want %d", got, 3*n)
			}
			if err := nb.AtomicNBI(transport.AtomicFetchAdd, 8, tc.off, 1, 0, make([]byte, 4)); err == nil {
				t.Fatal("a 4-byte buffer for an 8-byte value was accepted")
			}
		})
	}
}
