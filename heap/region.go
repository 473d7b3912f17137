package heap

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/internal/retire"
)

// Region is heap memory mapped outside the Go heap, so that the garbage
// collector never moves or scans it and a transport can share it.
type Region struct {
	mem    []byte
	usable int // bytes from the start that are read/write; Grow is serialized by the caller
}

// NewRegion maps size bytes of zeroed private memory. Pages are committed
// only when touched, so a large heap costs nothing until used.
func NewRegion(size int) (*Region, error) {
	if size <= 0 {
		return nil, fmt.Errorf("heap size %d must be positive", size)
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("mapping %d bytes of heap: %w", size, err)
	}
	return &Region{mem: mem, usable: size}, nil
}

// Bytes returns the whole region.
func (r *Region) Bytes() []byte { return r.mem }

// Close releases the region (retire.Mapping): its pages go at once, and a
// placeholder holds its addresses for retire.Quarantine, so that a late
// write lands there instead of faulting. Using Bytes afterwards touches
// memory that is no longer the heap. Idempotent.
func (r *Region) Close() error {
	if r.mem == nil {
		return nil
	}
	err := retire.Mapping(r.mem)
	r.mem = nil
	return err
}

// ReserveRegion reserves limit bytes of address space for a heap that may
// grow, of which the first size are usable (read/write, zeroed) and the
// rest inaccessible until Grow. The whole heap lives at one address, so an
// offset names the same byte whichever segment it lies in.
func ReserveRegion(size, limit int) (*Region, error) {
	if size <= 0 || limit < size {
		return nil, fmt.Errorf("heap size %d with limit %d", size, limit)
	}
	mem, err := unix.Mmap(-1, 0, limit, unix.PROT_NONE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("reserving %d bytes of heap: %w", limit, err)
	}
	r := &Region{mem: mem}
	if err := r.Grow(size); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Grow makes the region's first size bytes usable (a further segment of a
// reserved region); growing to a size already usable does nothing. The
// range is rounded up to whole pages.
func (r *Region) Grow(size int) error {
	if size <= r.usable {
		return nil
	}
	if size > len(r.mem) {
		return fmt.Errorf("growing a %d-byte region to %d bytes", len(r.mem), size)
	}
	page := unix.Getpagesize()
	from := r.usable / page * page
	to := min(len(r.mem), (size+page-1)/page*page)
	if err := unix.Mprotect(r.mem[from:to], unix.PROT_READ|unix.PROT_WRITE); err != nil {
		return fmt.Errorf("mapping heap bytes [%d, %d): %w", from, to, err)
	}
	r.usable = to
	return nil
}
