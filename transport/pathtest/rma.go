package pathtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/goshmem/shmem/transport"
)

// margin is the background kept around every transfer's target range.
const margin = 64

// testPutGet moves every size at several alignments of both the heap
// offset and the caller's buffer: Put (delivered by Quiet, src reusable on
// return), Get and GetNBI (filled by Quiet); none writes a byte outside
// its range, in the peer's heap or in the caller's buffer.
func testPutGet(t *testing.T, p Provider) {
	sizes := p.sizes()
	heapSize := 2*margin + sizes[len(sizes)-1] + 8
	w := p.world(t, 2, heapSize)
	h := w.Heap(1)
	guardOK := guardCheck(t, h)
	path := w.Path(0, 1)
	eng := path.Engine()
	for i, n := range sizes {
		aligns := []int{0, 1, 7}
		if n > 64<<10 {
			aligns = []int{0, 3} // one odd alignment is enough for the bulk routes
		}
		for _, a := range aligns {
			what := fmt.Sprintf("%d bytes at alignment %d", n, a)
			seed, bg := byte(i*3+a), byte(0xb0+a)
			off := uint64(margin + a)
			fill(h[:off+uint64(n)+margin], bg)
			want := pattern(n, seed)
			src := append(make([]byte, a), want...)[a:] // a misaligned source too
			if err := path.Put(off, src); err != nil {
				t.Fatalf("Put %s: %v", what, err)
			}
			fill(src, 0xee) // Put returned: src is the caller's again
			if err := eng.Quiet(); err != nil {
				t.Fatalf("Quiet after Put %s: %v", what, err)
			}
			checkRange(t, h, off, want, bg, margin, "Put "+what)

			for _, nbi := range []bool{false, true} {
				buf := make([]byte, n+16)
				fill(buf, 0xcc)
				dst := buf[8 : 8+n]
				var err error
				if nbi {
					if err = path.GetNBI(dst, off); err == nil {
						err = eng.Quiet()
					}
				} else {
					err = path.Get(dst, off)
				}
				name := map[bool]string{false: "Get ", true: "GetNBI "}[nbi] + what
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(dst, want) {
					t.Fatalf("%s: %s", name, firstDiff(dst, want))
				}
				if !same(buf[:8], 0xcc) || !same(buf[8+n:], 0xcc) {
					t.Fatalf("%s wrote outside its buffer", name)
				}
			}
		}
	}
	if err := path.Put(0, nil); err != nil {
		t.Fatalf("empty Put: %v", err)
	}
	if err := path.Get(nil, 0); err != nil {
		t.Fatalf("empty Get: %v", err)
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
	guardOK()
}

// testReadAfterWrite: a Get or fetching atomic sees the calling PE's own
// earlier puts to the same peer without a Quiet between them, whichever
// route each took. A provider whose reads may miss them
// (ReadsMayMissWrites) returns each byte as it was or as written, and
// exactly as written once Quiet completed the put.
func testReadAfterWrite(t *testing.T, p Provider) {
	sizes := p.sizes()
	big := sizes[len(sizes)-1]
	w := p.world(t, 2, big+128)
	h := w.Heap(1)
	path := w.Path(0, 1)
	eng := path.Engine()
	for i, n := range sizes {
		what := fmt.Sprintf("after a %d-byte Put", n)
		want := pattern(n, byte(i+1))
		// The put ends on a word boundary, so an atomic can read its end.
		off := uint64(64 + (8-n%8)%8)
		// Nothing is in flight (the last round ended with a Quiet) when a
		// provider's reads may miss writes: what the heap holds is "before".
		var was []byte
		if p.ReadsMayMissWrites {
			was = bytes.Clone(h[off : off+uint64(n)])
		}
		check := func(got []byte, at int, name string) {
			t.Helper()
			exp := want[at : at+len(got)]
			if !p.ReadsMayMissWrites {
				if !bytes.Equal(got, exp) {
					t.Fatalf("%s %s: %s", name, what, firstDiff(got, exp))
				}
				return
			}
			for j, b := range got {
				if b != exp[j] && b != was[at+j] {
					t.Fatalf("%s %s: byte %d is %#x, neither %#x as written nor %#x as it was", name, what, at+j, b, exp[j], was[at+j])
				}
			}
		}
		if err := path.Put(off, want); err != nil {
			t.Fatal(err)
		}
		if n >= 8 {
			old, err := path.Atomic(transport.AtomicFetch, 8, off+uint64(n-8), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			check(binary.NativeEndian.AppendUint64(nil, old), n-8, "atomic fetch of the last word")
		}
		last := make([]byte, min(n, 8))
		if err := path.Get(last, off+uint64(n-len(last))); err != nil {
			t.Fatal(err)
		}
		check(last, n-len(last), "Get of the last bytes")
		all := make([]byte, n)
		if err := path.Get(all, off); err != nil {
			t.Fatal(err)
		}
		check(all, 0, "Get of everything")
		if p.ReadsMayMissWrites {
			if err := eng.Quiet(); err != nil {
				t.Fatal(err)
			}
			if err := path.Get(all, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(all, want) {
				t.Fatalf("Get of everything %s and Quiet: %s", what, firstDiff(all, want))
			}
		}
	}
	if err := eng.Quiet(); err != nil {
		t.Fatal(err)
	}
}

// testPtr: Ptr is nil, or a live view of exactly the bytes asked for:
// what the peer's heap holds shows through it, and what is stored through
// it lands in the heap.
func testPtr(t *testing.T, p Provider) {
	w := p.world(t, 2, 4096)
	h := w.Heap(1)
	v := w.Path(0, 1).Ptr(64, 16)
	if v == nil {
		t.Skip("Ptr is nil: the peer's heap is not mapped here")
	}
	if len(v) != 16 || cap(v) != 16 {
		t.Fatalf("Ptr(64, 16) has length %d and capacity %d, want 16 and 16", len(v), cap(v))
	}
	store(h, 64, 8, 0x1122334455667788)
	if got := load(v, 0, 8); got != 0x1122334455667788 {
		t.Fatalf("the heap's word reads %#x through Ptr", got)
	}
	store(v, 8, 8, 0x99)
	if got := load(h, 72, 8); got != 0x99 {
		t.Fatalf("a word stored through Ptr reads %#x in the heap", got)
	}
}
