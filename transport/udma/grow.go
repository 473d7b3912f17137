package udma

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/internal/errs"
)

// A growable segment reserves address space for its header plus a heap of
// limit bytes and maps the file into the start of it; Grow maps further
// parts of the file (further segments of the heap) right after, so the
// heap stays one range of addresses and an offset means the same byte in
// every segment. The owner extends the file before it maps; a peer maps
// only what the owner has extended (the heap actor orders the two: every
// PE grows its own file before the allocation is agreed, and maps its
// peers' after). The file descriptor stays open for those later maps.

// CreateGrowable is Create for a heap of heapSize bytes that may grow to
// limit (see Grow). Reservation gives the whole range.
func CreateGrowable(job string, rank int, heapSize, limit int) (*Segment, error) {
	if limit < heapSize || uint64(limit) > MaxHeapSize {
		return nil, errs.New("udma.Create", rank, errs.NoPE, errs.ErrInvalidArgument, "heap limit %d below the size %d or above %d", limit, heapSize, int64(MaxHeapSize))
	}
	return create(job, rank, heapSize, limit)
}

// OpenGrowable is Open for a peer's heap that may grow to limit.
func OpenGrowable(job string, rank int, expectHeap, limit int) (*Segment, error) {
	if limit < expectHeap || uint64(limit) > MaxHeapSize {
		return nil, errs.New("udma.Open", errs.NoPE, rank, errs.ErrInvalidArgument, "heap limit %d below the size %d or above %d", limit, expectHeap, int64(MaxHeapSize))
	}
	return open(job, rank, expectHeap, limit)
}

// mapSegment maps size bytes of fd shared. With a limit above heapSize it
// first reserves room for the header and limit heap bytes, maps the file
// at its start, and keeps a duplicate of fd; it returns the mapping, the
// reservation (nil without growth) and that fd (-1 without).
func mapSegment(fd, size, heapSize, limit int) (mem, resv []byte, gfd int, err error) {
	if limit <= heapSize {
		mem, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		return mem, nil, -1, err
	}
	resv, err = unix.Mmap(-1, 0, HeaderSize+limit, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, nil, -1, err
	}
	if err = mapAt(resv, fd, 0, size); err != nil {
		unix.Munmap(resv)
		return nil, nil, -1, err
	}
	if gfd, err = unix.Dup(fd); err != nil {
		unix.Munmap(resv)
		return nil, nil, -1, err
	}
	unix.CloseOnExec(gfd)
	return resv[:size:size], resv, gfd, nil
}

// mapAt maps bytes [from, to) of fd over the same range of resv.
func mapAt(resv []byte, fd, from, to int) error {
	_, err := unix.MmapPtr(fd, int64(from), unsafe.Pointer(&resv[from]), uintptr(to-from),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_FIXED)
	return err
}

// Reservation returns the heap's whole reserved range, Limit bytes, of
// which the first Usable are mapped; for a segment that cannot grow it is
// Heap.
func (s *Segment) Reservation() []byte {
	if s.resv == nil {
		return s.heap
	}
	return s.resv[HeaderSize:len(s.resv):len(s.resv)]
}

// Usable returns how many heap bytes are mapped; safe from any goroutine.
func (s *Segment) Usable() int64 { return s.usable.Load() }

// Grow maps the heap's first size bytes (rounded up to whole pages):
// the owner first extends the file, with its pages reserved as Create
// does, so a full /dev/shm is errs.ErrOutOfMemory now and not a fault
// later; a peer maps what the owner extended. Growing to a size already
// mapped does nothing. The caller serializes Grow calls of one segment.
func (s *Segment) Grow(size int) error {
	usable := int(s.usable.Load())
	if size <= usable {
		return nil
	}
	if s.resv == nil || size > len(s.resv)-HeaderSize {
		return errs.New("udma.Grow", errs.NoPE, s.rank, errs.ErrOutOfMemory, "heap of %d bytes cannot grow to %d", usable, size)
	}
	page := unix.Getpagesize()
	to := min(len(s.resv), HeaderSize+(size+page-1)/page*page)
	from := HeaderSize + usable
	if s.owner {
		if err := reserve(s.fd, to); err != nil {
			return errs.New("udma.Grow", s.rank, errs.NoPE, errs.ErrOutOfMemory, "extending %s to %d bytes: %v", s.path, to, err)
		}
	} else {
		var st unix.Stat_t
		if err := unix.Fstat(s.fd, &st); err != nil || st.Size < int64(to) {
			return errs.New("udma.Grow", errs.NoPE, s.rank, errs.ErrPEFailed, "%s is %d bytes, not the %d its owner grew it to (%v)", s.path, st.Size, to, err)
		}
	}
	if err := mapAt(s.resv, s.fd, from, to); err != nil {
		return errs.New("udma.Grow", errs.NoPE, s.rank, errs.ErrOutOfMemory, "mapping bytes [%d, %d) of %s: %v", from, to, s.path, fmt.Sprint(err))
	}
	s.usable.Store(int64(to - HeaderSize))
	return nil
}
