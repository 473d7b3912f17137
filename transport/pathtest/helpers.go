package pathtest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// pattern returns n bytes that differ from any other seed's at most
// positions, so a misplaced or stale byte shows.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7+i>>8) + seed
	}
	return b
}

// fill sets every byte of b to v.
func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// same reports whether every byte of b is v.
func same(b []byte, v byte) bool {
	for _, x := range b {
		if x != v {
			return false
		}
	}
	return true
}

// firstDiff describes where got and want first differ, for messages.
func firstDiff(got, want []byte) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("byte %d is %#x, want %#x", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("length %d, want %d", len(got), len(want))
	}
	return "equal"
}

// load reads the width-byte word at off of h atomically: providers write
// heaps from other goroutines.
func load(h []byte, off uint64, width int) uint64 {
	if width == 4 {
		return uint64(transport.Load32(h, off))
	}
	return transport.Load64(h, off)
}

// store writes the width-byte word at off of h atomically.
func store(h []byte, off uint64, width int, v uint64) {
	transport.ApplyAtomic(h, transport.AtomicSet, width, off, v, 0)
}

func mask(width int) uint64 {
	if width == 4 {
		return 1<<32 - 1
	}
	return ^uint64(0)
}

// guardCheck fills h's capacity beyond its length (the world's guard
// memory, if any) and returns a check that nothing wrote it since.
func guardCheck(t *testing.T, h []byte) func() {
	g := h[len(h):cap(h)]
	fill(g, 0x5a)
	return func() {
		t.Helper()
		if !same(g, 0x5a) {
			t.Errorf("guard memory past the heap's end was written")
		}
	}
}

// wantErr fails t unless err wraps sentinel and names target as the PE
// the operation addressed.
func wantErr(t *testing.T, err, sentinel error, target int, what string) {
	t.Helper()
	var e *errs.Error
	switch {
	case !errors.Is(err, sentinel):
		t.Errorf("%s: got %v, want %v", what, err, sentinel)
	case !errors.As(err, &e) || e.Target != target:
		t.Errorf("%s: %v does not name PE %d as its target", what, err, target)
	}
}

// await returns once cond holds. With a bell it waits as the WaitUntil
// family does (arm, re-check, wait); without one it drives eng with Quiet,
// which a provider that rings nothing needs for progress. The test fails
// after guard.
func await(t *testing.T, bell transport.Bell, eng transport.Engine, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still waiting after %v", what, guard)
		}
		if bell == nil {
			if err := eng.Quiet(); err != nil {
				t.Fatalf("%s: Quiet: %v", what, err)
			}
			runtime.Gosched()
			continue
		}
		armed := bell.Arm()
		if !cond() {
			bell.Wait(armed, time.Second) // re-checks the guard now and then
		}
		bell.Disarm()
	}
}

// checkRange fails t unless h[off:off+len(want)] is want and the margin
// bytes on either side still hold bg.
func checkRange(t *testing.T, h []byte, off uint64, want []byte, bg byte, margin int, what string) {
	t.Helper()
	end := off + uint64(len(want))
	if got := h[off:end]; !bytes.Equal(got, want) {
		t.Fatalf("%s: %s", what, firstDiff(got, want))
	}
	lo := max(0, int(off)-margin)
	if !same(h[lo:off], bg) || !same(h[end:min(len(h), int(end)+margin)], bg) {
		t.Fatalf("%s: wrote outside [%d, %d)", what, off, end)
	}
}
