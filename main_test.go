package shmem_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// TestMain fails the package when any test leaves a goroutine behind:
// Finalize and sim.Run must release everything a world started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// run runs fn on n simulated PEs and fails the test on any PE's error.
func run(t testing.TB, n int, fn func(p *shmem.PE) error, opts ...sim.Option) {
	t.Helper()
	if err := sim.Run(n, fn, opts...); err != nil {
		t.Fatal(err)
	}
}

// want returns an error when got differs from exp, naming what and the PE.
func want[T comparable](p *shmem.PE, what string, got, exp T) error {
	if got != exp {
		return fmt.Errorf("PE %d: %s = %v, want %v", p.MyPE(), what, got, exp)
	}
	return nil
}

// wantErr checks that err matches sentinel and that its message names op
// and every fragment given.
func wantErr(err, sentinel error, op string, fragments ...string) error {
	if err == nil {
		return fmt.Errorf("%s: no error, want %v", op, sentinel)
	}
	if !errors.Is(err, sentinel) {
		return fmt.Errorf("%s: error %q does not match %v", op, err, sentinel)
	}
	msg := err.Error()
	for _, f := range append([]string{op}, fragments...) {
		if !strings.Contains(msg, f) {
			return fmt.Errorf("error %q does not mention %q", msg, f)
		}
	}
	return nil
}

// span is one mapping of this process: a line of /proc/self/maps.
type span struct{ lo, hi uintptr }

// spansOf returns the mapping each of addrs lies in, the zero span where
// none does or /proc is missing (Linux only).
func spansOf(addrs []uintptr) []span {
	out := make([]span, len(addrs))
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uintptr
		if _, err := fmt.Sscanf(line, "%x-%x", &lo, &hi); err != nil {
			continue
		}
		for i, a := range addrs {
			if a >= lo && a < hi {
				out[i] = span{lo, hi}
			}
		}
	}
	return out
}

// mapped reports which of addrs lie in a mapping of this process; all
// false where /proc is missing.
func mapped(addrs []uintptr) []bool {
	out := make([]bool, len(addrs))
	for i, s := range spansOf(addrs) {
		out[i] = s != span{}
	}
	return out
}

// stillMapped reports which of the mappings still hold their heap: a span
// of the same bounds that has pages in memory (Rss in /proc/self/smaps).
// A released heap's range is first a placeholder of untouched private
// memory (internal/retire: Rss 0), then unmapped, and then the runtime or
// another world may map memory at the same address (the Lazy CI run of
// TestWorldReleased saw 3 of 8 freed heaps' addresses mapped again), but
// not as a mapping of the same bounds with pages. The heaps checked must
// have been touched, so that they had pages.
func stillMapped(addrs []uintptr, were []span) []bool {
	out := make([]bool, len(addrs))
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return out
	}
	var cur span
	for _, line := range strings.Split(string(b), "\n") {
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			cur = span{lo, hi}
			continue
		}
		var kb int
		if _, err := fmt.Sscanf(line, "Rss: %d kB", &kb); err != nil || kb == 0 {
			continue
		}
		for i, a := range addrs {
			if a >= cur.lo && a < cur.hi && cur == were[i] {
				out[i] = true
			}
		}
	}
	return out
}

// heapAddr returns the address of p's heap, via an object's Local view.
func heapAddr[T shmem.Elem](p *shmem.PE, s shmem.Sym[T]) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(s.Local(p))))
}

// runErr is sim.Run for use off the test goroutine.
func runErr(n int, fn func(p *shmem.PE) error, opts ...sim.Option) error {
	return sim.Run(n, fn, opts...)
}

func isInvalid(err error) bool { return errors.Is(err, shmem.ErrInvalidArgument) }
