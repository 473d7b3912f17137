package pathtest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// boundsCase is one operation that reaches outside a heap of heapSize
// bytes; local says the path can refuse it without knowing the heap's
// size (a malformed atomic or signal).
//
// A peer that refuses requests (BoundsPeerRefuses) sees a split transfer
// one piece at a time: pieces wholly inside its heap may land before the
// one that reaches outside is refused, and the sender cannot know when they
// did, so for a split case only the guard memory is checked.
type boundsCase struct {
	name  string
	local bool
	split bool // large enough that a provider may split it
	op    func(p transport.Path, dst []byte) error
}

func boundsCases(heapSize int, big int) []boundsCase {
	end := uint64(heapSize)
	eight := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	return []boundsCase{
		{"Put past the end", false, false, func(p transport.Path, _ []byte) error { return p.Put(end-4, eight) }},
		{"large Put past the end", false, true, func(p transport.Path, _ []byte) error { return p.Put(end-uint64(big)/2, pattern(big, 1)) }},
		{"Put whose end overflows", false, false, func(p transport.Path, _ []byte) error { return p.Put(1<<64-4, eight) }},
		{"Put after the end", false, false, func(p transport.Path, _ []byte) error { return p.Put(end, eight[:1]) }},
		{"Get past the end", false, false, func(p transport.Path, dst []byte) error { return p.Get(dst[:8], end-4) }},
		{"GetNBI past the end", false, false, func(p transport.Path, dst []byte) error { return p.GetNBI(dst[:8], end-4) }},
		{"Atomic after the end", false, false, func(p transport.Path, _ []byte) error {
			_, err := p.Atomic(transport.AtomicFetchAdd, 8, end, 1, 0)
			return err
		}},
		{"AtomicPost after the end", false, false, func(p transport.Path, _ []byte) error {
			return p.AtomicPost(transport.AtomicSet, 4, end, 1)
		}},
		{"PutSignal data past the end", false, false, func(p transport.Path, _ []byte) error {
			return p.PutSignal(end-4, eight, 0, 1, transport.SignalSet)
		}},
		{"PutSignal signal after the end", false, false, func(p transport.Path, _ []byte) error {
			return p.PutSignal(0, eight, end, 1, transport.SignalSet)
		}},
		{"Atomic of width 2", true, false, func(p transport.Path, _ []byte) error {
			_, err := p.Atomic(transport.AtomicFetchAdd, 2, 0, 1, 0)
			return err
		}},
		{"misaligned Atomic", true, false, func(p transport.Path, _ []byte) error {
			_, err := p.Atomic(transport.AtomicFetchAdd, 8, 4, 1, 0)
			return err
		}},
		{"misaligned AtomicPost", true, false, func(p transport.Path, _ []byte) error {
			return p.AtomicPost(transport.AtomicFetchAdd, 4, 2, 1)
		}},
		{"unknown atomic op", true, false, func(p transport.Path, _ []byte) error {
			return p.AtomicPost(transport.AtomicOp(200), 8, 0, 1)
		}},
		{"misaligned signal", true, false, func(p transport.Path, _ []byte) error {
			return p.PutSignal(0, eight, 3, 1, transport.SignalSet)
		}},
		{"unknown signal op", true, false, func(p transport.Path, _ []byte) error {
			return p.PutSignal(0, eight, 8, 1, transport.SignalOp(9))
		}},
	}
}

// testBounds issues each out-of-range operation and checks the provider's
// declared refusal; in every mode neither heap, nor the guard memory past
// the target's, nor the caller's buffer is written.
func testBounds(t *testing.T, p Provider) {
	const heapSize = 64 << 10
	w := p.world(t, 2, heapSize)
	end := len(w.Heap(1)) // the heap may be larger than asked
	dead := false
	for _, c := range boundsCases(end, min(p.largest()+1, end)) {
		if c.local && p.Bounds == BoundsPanic {
			continue // the caller's checks, not the path's
		}
		if dead {
			w = p.world(t, 2, heapSize)
		}
		// A request the peer refuses costs the connection.
		dead = p.Bounds == BoundsPeerRefuses && !c.local
		t.Run(c.name, func(t *testing.T) { boundsCase1(t, p, w, c) })
	}
}

func boundsCase1(t *testing.T, p Provider, w World, c boundsCase) {
	h := w.Heap(1)
	copy(h, pattern(len(h), 77))
	guardOK := guardCheck(t, h)
	path := w.Path(0, 1)
	eng := path.Engine()
	dst := make([]byte, 16)
	fill(dst, 0xcc)
	err, panicked := call(func() error { return c.op(path, dst) })
	switch {
	case p.Bounds == BoundsPanic:
		if !panicked {
			t.Errorf("returned %v; a mapped path's bounds check panics", err)
		}
	case c.local || p.Bounds == BoundsInvalid:
		if panicked {
			t.Fatalf("panicked: %v", err)
		}
		wantErr(t, err, errs.ErrInvalidArgument, 1, c.name)
	case p.Bounds == BoundsPeerRefuses:
		if panicked {
			t.Fatalf("panicked: %v", err)
		}
		if err == nil {
			err = eng.Quiet()
		}
		wantErr(t, err, errs.ErrPEFailed, 1, c.name)
	}
	if p.Bounds == BoundsPeerRefuses && !c.local {
		_ = eng.Quiet() // every frame the peer had is applied or refused
	} else {
		// The path still works, and its completion orders the check below.
		if err := path.Put(0, []byte{9}); err != nil {
			t.Fatalf("Put after the refusal: %v", err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatalf("Quiet after the refusal: %v", err)
		}
		h[0] = pattern(1, 77)[0]
	}
	if c.split && p.Bounds == BoundsPeerRefuses {
		guardOK()
		return
	}
	if want := pattern(len(h), 77); !bytes.Equal(h, want) {
		t.Errorf("the refused operation wrote the heap: %s", firstDiff(h, want))
	}
	if !same(dst, 0xcc) {
		t.Errorf("the refused operation wrote the caller's buffer")
	}
	guardOK()
}

// call runs f and reports its error, or that it panicked (the panic's
// value as the error).
func call(f func() error) (err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			err, panicked = fmt.Errorf("panic: %v", r), true
		}
	}()
	return f(), false
}
