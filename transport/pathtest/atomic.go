package pathtest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// atomicCase is one atomic applied to a word holding init; want is the
// word afterwards at width 8. Values are chosen so that masking them to 32
// bits gives the width-4 case (addition, the bitwise ops and equality all
// commute with the mask).
type atomicCase struct {
	op                  transport.AtomicOp
	init, operand, cond uint64
	want                uint64
}

var atomicCases = []atomicCase{
	{transport.AtomicFetch, 0x8123456789abcdef, 0, 0, 0x8123456789abcdef},
	{transport.AtomicSet, 1, 0xfedcba9876543210, 0, 0xfedcba9876543210},
	{transport.AtomicSwap, 0x0123456789abcdef, 0xa5a5a5a55a5a5a5a, 0, 0xa5a5a5a55a5a5a5a},
	{transport.AtomicCompareSwap, 0xdeadbeefcafef00d, 0x1122334455667788, 0xdeadbeefcafef00d, 0x1122334455667788},
	{transport.AtomicCompareSwap, 5, 9, 4, 5},
	{transport.AtomicFetchAdd, 10, 3, 0, 13},
	{transport.AtomicFetchAdd, ^uint64(0), 1, 0, 0},                             // wraps at either width
	{transport.AtomicFetchAdd, 0x7fffffffffffffff, 0x10, 0, 0x800000000000000f}, // carries into the top bit
	{transport.AtomicFetchAnd, 0xf0f0f0f0f0f0f0f0, 0xff00ff00ff00ff00, 0, 0xf000f000f000f000},
	{transport.AtomicFetchOr, 0x0f0f0f0f0f0f0f0f, 0x00ff00ff00ff00ff, 0, 0x0fff0fff0fff0fff},
	{transport.AtomicFetchXor, 0xffff0000ffff0000, 0x0ff00ff00ff00ff0, 0, 0xf00f0ff0f00f0ff0},
}

// testAtomics applies every op at both widths, fetching (the old value
// comes back) and posted (applied by the next Quiet), and checks the word
// afterwards and that the bytes beside it are untouched.
func testAtomics(t *testing.T, p Provider) {
	w := p.world(t, 2, 4096)
	h := w.Heap(1)
	path := w.Path(0, 1)
	eng := path.Engine()
	const stride = 24 // each word with 8 bytes of background either side
	for _, width := range []int{4, 8} {
		m := mask(width)
		for i, c := range atomicCases {
			for _, post := range []bool{false, true} {
				if post && (c.op == transport.AtomicFetch || c.op == transport.AtomicCompareSwap) {
					continue // no posted form
				}
				what := fmt.Sprintf("width %d op %d case %d (posted %v)", width, c.op, i, post)
				off := uint64(8 + stride*i)
				fill(h[off-8:off+16], 0x3c)
				store(h, off, width, c.init&m)
				var old uint64
				var err error
				if post {
					if err = path.AtomicPost(c.op, width, off, c.operand&m); err == nil {
						err = eng.Quiet()
					}
				} else {
					old, err = path.Atomic(c.op, width, off, c.operand&m, c.cond&m)
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !post && old != c.init&m {
					t.Errorf("%s returned %#x, want the old value %#x", what, old, c.init&m)
				}
				if got := load(h, off, width); got != c.want&m {
					t.Errorf("%s left %#x, want %#x", what, got, c.want&m)
				}
				if !same(h[off-8:off], 0x3c) || !same(h[off+uint64(width):off+16], 0x3c) {
					t.Errorf("%s wrote beside its word", what)
				}
			}
		}
	}
}

// testAtomicsConcurrent: goroutines of two PEs add to one word of a third
// at once, fetching and posted; no update is lost and every fetching add
// sees a different old value. Then they increment another word with
// compare-and-swap loops, which only count right if each swap is atomic.
func testAtomicsConcurrent(t *testing.T, p Provider) {
	const goroutines, adds, swaps = 4, 100, 16
	w := p.world(t, 3, 4096)
	h := w.Heap(1)
	for _, width := range []int{4, 8} {
		addOff, casOff := uint64(64), uint64(128)
		store(h, addOff, width, 0)
		store(h, casOff, width, 0)
		var wg sync.WaitGroup
		olds := make(chan uint64, 2*goroutines*adds)
		errc := make(chan error, 2*goroutines)
		for _, from := range []int{0, 2} {
			path := w.Path(from, 1)
			for range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errc <- addAndSwap(path, width, addOff, casOff, adds, swaps, olds)
				}()
			}
		}
		wg.Wait()
		close(errc)
		close(olds)
		for err := range errc {
			if err != nil {
				t.Fatalf("width %d: %v", width, err)
			}
		}
		for _, from := range []int{0, 2} {
			if err := w.Path(from, 1).Engine().Quiet(); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := load(h, addOff, width), uint64(2*goroutines*adds); got != want {
			t.Errorf("width %d: %d adds left %d", width, want, got)
		}
		if got, want := load(h, casOff, width), uint64(2*goroutines*swaps); got != want {
			t.Errorf("width %d: %d compare-and-swap increments left %d", width, want, got)
		}
		seen := map[uint64]bool{}
		for o := range olds {
			if seen[o] {
				t.Errorf("width %d: two fetching adds returned the old value %d", width, o)
				break
			}
			seen[o] = true
		}
	}
}

// addAndSwap adds 1 to the word at addOff n times, every other time
// fetching (sending the old value to olds), then increments the word at
// casOff swaps times with compare-and-swap loops.
func addAndSwap(path transport.Path, width int, addOff, casOff uint64, n, swaps int, olds chan<- uint64) error {
	for i := range n {
		if i%2 == 1 {
			if err := path.AtomicPost(transport.AtomicFetchAdd, width, addOff, 1); err != nil {
				return err
			}
			continue
		}
		old, err := path.Atomic(transport.AtomicFetchAdd, width, addOff, 1, 0)
		if err != nil {
			return err
		}
		olds <- old
	}
	for range swaps {
		cur, err := path.Atomic(transport.AtomicFetch, width, casOff, 0, 0)
		if err != nil {
			return err
		}
		for {
			old, err := path.Atomic(transport.AtomicCompareSwap, width, casOff, cur+1, cur)
			if err != nil {
				return err
			}
			if old == cur {
				break
			}
			cur = old
		}
	}
	return nil
}
