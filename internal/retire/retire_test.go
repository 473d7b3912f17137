package retire

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestMappingKeepsAddressesWritable retires a mapping holding data: its
// addresses stay writable (a late write does not fault) and read as fresh
// zero memory, not the released data.
func TestMappingKeepsAddressesWritable(t *testing.T) {
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 4*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mem {
		mem[i] = 0xAB
	}
	if err := Mapping(mem); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int{0, page, 4*page - 1} {
		if mem[off] != 0 {
			t.Fatalf("byte %d after retiring = %#x, want the placeholder's 0", off, mem[off])
		}
		mem[off] = 1 // a late write: lands in the placeholder
	}
}

// TestMappingEmpty: nothing to retire is no error.
func TestMappingEmpty(t *testing.T) {
	if err := Mapping(nil); err != nil {
		t.Fatal(err)
	}
}
