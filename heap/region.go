package heap

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Region is heap memory mapped outside the Go heap, so that the garbage
// collector never moves or scans it and a transport can share it.
type Region struct {
	mem []byte
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
	return &Region{mem: mem}, nil
}

// Bytes returns the whole region.
func (r *Region) Bytes() []byte { return r.mem }

// Close unmaps the region; using Bytes afterwards faults. Idempotent.
func (r *Region) Close() error {
	if r.mem == nil {
		return nil
	}
	err := unix.Munmap(r.mem)
	r.mem = nil
	return err
}
