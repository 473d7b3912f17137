// Package retire releases a memory mapping that goroutines may still be
// touching: a PE's heap, or a peer's heap mapped into this process, at
// Finalize.
//
// The operations' fast paths check that the PE runs and then copy, with
// no count of the calls in flight (an atomic add and subtract on every
// put would cost about as much as an 8-byte put on shared memory). A
// goroutine that passed the check just before another goroutine's
// Finalize would copy into unmapped memory and fault the whole process.
// Mapping therefore replaces the range, in one mmap call, by private
// anonymous memory that commits nothing until touched: the heap's pages
// are released at once (the shared file's, once every process has let go
// of them), a late write lands in the placeholder and is lost, and no
// other mapping can take the addresses while late callers may use them.
// The placeholder is unmapped Quarantine later.
package retire

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Quarantine is how long a retired range stays reserved by its
// placeholder. A late call is a few instructions from its check to its
// copy; only a goroutine descheduled between the two for longer than this
// (seconds of an overloaded host) could still fault. Ten seconds bounds
// what a loop creating worlds keeps reserved: address space (untouched
// placeholders commit no memory) and one mapping of the process's
// vm.max_map_count (65 530 by default) a heap.
const Quarantine = 10 * time.Second

// Mapping retires mem, which must be a whole mapping made by unix.Mmap
// (page-aligned, as returned). It returns the error of the unmap when the
// placeholder could not be made and mem was unmapped at once instead; the
// placeholder's own unmap, Quarantine later, reports nothing. mem must not
// be retired twice.
func Mapping(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(mem)), uintptr(len(mem)),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE|unix.MAP_FIXED)
	if err != nil {
		// Without a placeholder (the process is out of mappings), release
		// the memory as before: a late caller faults, as it did.
		return unix.Munmap(mem)
	}
	time.AfterFunc(Quarantine, func() { _ = unix.Munmap(mem) })
	return nil
}
