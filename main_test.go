package shmem_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

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
// resident reports whether any page of mem is in memory (mincore(2)).
// A released heap's range is first a placeholder of untouched private
// memory (internal/retire), then unmapped: neither has pages in memory,
// while a heap still mapped has those the test touched. Pages are
// checked, not mappings: the kernel merges a placeholder with the
// mappings beside it, and once unmapped the runtime or another world
// may map the addresses again.
func resident(mem []byte) bool {
	if len(mem) == 0 {
		return false
	}
	page := uintptr(unix.Getpagesize())
	lead := uintptr(unsafe.Pointer(unsafe.SliceData(mem))) % page
	whole := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), -int(lead))), uintptr(len(mem))+lead)
	vec := make([]byte, (uintptr(len(whole))+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(whole))), uintptr(len(whole)),
		uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return false // ENOMEM: unmapped
	}
	for _, v := range vec {
		if v&1 != 0 {
			return true
		}
	}
	return false
}

// heapBytes returns the bytes of s's local object on p, to pass to
// resident once p is finalized (never to read).
func heapBytes[T shmem.Elem](p *shmem.PE, s shmem.Sym[T]) []byte {
	l := s.Local(p)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(l))), len(l)*int(unsafe.Sizeof(l[0])))
}

// runErr is sim.Run for use off the test goroutine.
func runErr(n int, fn func(p *shmem.PE) error, opts ...sim.Option) error {
	return sim.Run(n, fn, opts...)
}

func isInvalid(err error) bool { return errors.Is(err, shmem.ErrInvalidArgument) }
