//go:build cgo && goshmem_fabric

package fabric

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// TestCReachedIsReached: gf.c's comparison of counts is counts.go's.
func TestCReachedIsReached(t *testing.T) {
	for _, count := range []uint64{0, 3, 1<<31 - 1, 1 << 31, 0xffffffff80000000, 1<<32 - 1, 1 << 32, 1<<32 + 3} {
		for _, want := range []uint64{0, 3, 1<<31 - 1, 1<<31 + 2, 1<<32 - 1, 1 << 32, 1<<32 + 3} {
			if c, g := cReached(count, want), reached(count, want); c != g {
				t.Errorf("count %#x, want %#x: gf_cntr_reached says %v, reached %v", count, want, c, g)
			}
		}
	}
}

// TestCountersAcrossTheirWrap: on the sockets provider, whose counters
// keep 32 bits, an endpoint whose counts stand just below 2^31 or 2^32
// puts and gets across it: Quiet returns once the puts landed (past 2^32
// it waited for its timeout: the counter read 3 where 2^32+3 operations
// were issued) and the gets read what was put.
func TestCountersAcrossTheirWrap(t *testing.T) {
	for _, start := range []uint64{1<<31 - 3, 1<<32 - 3} {
		w := newWorld(t, 2, 4096, func(c *Config) {
			c.Provider, c.Node = "sockets", "127.0.0.1"
			c.OpTimeout = 10 * time.Second
		})
		n := w.nodes[0]
		if n.c.cntr32 == 0 {
			t.Fatalf("provider %s: counters not found 32 bits wide", n.prov)
		}
		if err := n.enter("test", errs.NoPE); err != nil {
			t.Fatal(err)
		}
		for which := 0; which < 2; which++ {
			if err := n.eng.setCounts(which, start); err != nil {
				n.exit()
				t.Fatal(err)
			}
		}
		n.exit()
		p := w.path(t, 0, 1)
		const ops = 8
		for i := range ops {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], start+uint64(i))
			if err := p.Put(uint64(8*i), b[:]); err != nil {
				t.Fatalf("start %#x: put %d: %v", start, i, err)
			}
		}
		if err := n.Engine().Quiet(); err != nil {
			t.Fatalf("start %#x: Quiet: %v", start, err)
		}
		for i := range ops {
			if got := binary.LittleEndian.Uint64(w.heaps[1][8*i:]); got != start+uint64(i) {
				t.Fatalf("start %#x: word %d holds %#x after Quiet", start, i, got)
			}
		}
		got := make([]byte, 8*ops)
		for i := range ops {
			if err := p.Get(got[8*i:8*i+8], uint64(8*i)); err != nil {
				t.Fatalf("start %#x: get %d: %v", start, i, err)
			}
		}
		if !bytes.Equal(got, w.heaps[1][:8*ops]) {
			t.Fatalf("start %#x: gets read %x", start, got)
		}
		if err := n.Engine().Quiet(); err != nil {
			t.Fatalf("start %#x: Quiet after gets: %v", start, err)
		}
	}
}
