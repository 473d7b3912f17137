package main

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/goshmem/shmem"
)

// fieldString reads a C string within its field and never past it: a
// field without a NUL is refused, saying so, although the byte after it
// (here the array's next one) is a NUL.
func TestFieldStringBounded(t *testing.T) {
	var mem [12]byte
	copy(mem[:], "token\x00junk")
	if s, err := fieldString(unsafe.Pointer(&mem[0]), 8); err != nil || s != "token" {
		t.Fatalf("terminated: %q, %v", s, err)
	}
	copy(mem[:], "AAAAAAAA\x00")
	if s, err := fieldString(unsafe.Pointer(&mem[0]), 8); !errors.Is(err, shmem.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "not NUL-terminated within its 8-byte field") {
		t.Fatalf("unterminated: %q, %v", s, err)
	}
	if _, err := fieldString(nil, 8); !errors.Is(err, shmem.ErrInvalidArgument) {
		t.Fatalf("nil: %v", err)
	}
}
