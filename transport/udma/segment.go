package udma

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/retire"
	"github.com/goshmem/shmem/transport"
)

// HeaderSize is the size of the segment header that precedes the heap. One
// page, so the heap that follows it is page aligned.
const HeaderSize = 4096

// MaxJobLen is the longest job name Create and Open accept; with the prefix
// and a rank the segment's file name stays far below NAME_MAX.
const MaxJobLen = 128

// MaxHeapSize bounds the heap a segment may hold (64 TiB), so that header
// plus heap never overflows an offset on any platform we map on.
const MaxHeapSize = 1 << 46

// Dir is where segments live: the tmpfs that POSIX shared memory uses.
const Dir = "/dev/shm"

// namePrefix starts every segment's file name; ReapStale looks only at these.
const namePrefix = "goshmem-"

// State is the life-cycle word a segment's owner publishes in its header so
// that peers (and shmem-config) can see it without asking the owner.
type State uint32

// The states an owner publishes. A segment reads StateCreating until Create
// has written its header; other values are the caller's own.
const (
	StateCreating  State = 0
	StateAlive     State = 1
	StateFinalized State = 2
)

// ErrNotReady marks an Open of a segment whose owner has not finished
// writing its header; the caller may retry. It is wrapped together with
// errs.ErrBootstrap.
var ErrNotReady = errors.New("segment not ready")

// Header layout. Immutable fields share the first cache line; the two
// mutable words that peers poll get their own lines (two lines apart, so an
// adjacent-line prefetcher does not pair them) and ring traffic on the bell
// never invalidates the line that Open and ReapStale read.
const (
	hdrMagic   = 0   // uint64
	hdrVersion = 8   // uint32
	hdrHdrSize = 12  // uint32: HeaderSize, so a future layout can grow it
	hdrHeap    = 16  // uint64: heap bytes after the header
	hdrPID     = 24  // uint64: owner pid
	hdrStart   = 32  // uint64: owner start time (clock ticks since boot; 0 = unknown)
	hdrRank    = 40  // uint64: rank in the segment's name
	hdrReady   = 128 // uint32: 1 once the header is complete
	hdrState   = 132 // uint32: State
	hdrWaiters = 256 // uint32: FutexBell waiters
	hdrSeq     = 260 // uint32: FutexBell ring count (the futex word)
	hdrData    = 264 // uint32: FutexBell data waiters (of waiters, those Arm armed)
	hdrUsed    = 320 // bytes of the header anything reads

	segMagic   uint64 = 0x414d4455_6d687367 // "gshmUDMA" little endian
	segVersion uint32 = 2                   // 2: hdrData
	maxPID            = 1 << 22             // the kernel's PID_MAX_LIMIT
)

// header is the decoded, validated immutable part of a segment header.
type header struct {
	heap  uint64
	pid   int
	start uint64
	rank  uint64
	ready bool
	state State
}

// parseHeader decodes the first hdrUsed bytes of a segment. It accepts only
// our magic, version and header size, and a pid the kernel could have given.
func parseHeader(b []byte) (header, error) {
	if len(b) < hdrUsed {
		return header{}, fmt.Errorf("header is %d bytes, want %d", len(b), hdrUsed)
	}
	ne := binary.NativeEndian
	if m := ne.Uint64(b[hdrMagic:]); m != segMagic {
		return header{}, fmt.Errorf("bad magic %#x", m)
	}
	if v := ne.Uint32(b[hdrVersion:]); v != segVersion {
		return header{}, fmt.Errorf("layout version %d, want %d", v, segVersion)
	}
	if hs := ne.Uint32(b[hdrHdrSize:]); hs != HeaderSize {
		return header{}, fmt.Errorf("header size %d, want %d", hs, HeaderSize)
	}
	h := header{
		heap:  ne.Uint64(b[hdrHeap:]),
		start: ne.Uint64(b[hdrStart:]),
		rank:  ne.Uint64(b[hdrRank:]),
		ready: ne.Uint32(b[hdrReady:]) == 1,
		state: State(ne.Uint32(b[hdrState:])),
	}
	if h.heap > MaxHeapSize {
		return header{}, fmt.Errorf("heap size %d exceeds %d", h.heap, MaxHeapSize)
	}
	pid := ne.Uint64(b[hdrPID:])
	if pid == 0 || pid > maxPID {
		return header{}, fmt.Errorf("owner pid %d out of range", pid)
	}
	h.pid = int(pid)
	return h, nil
}

// Segment is one PE's symmetric heap in shared memory, mapped into this
// process. The owner (Create) and every peer on the host (Open) hold their
// own mapping of the same pages.
type Segment struct {
	job    string
	rank   int
	path   string
	owner  bool
	dev    uint64 // identity of the file, so Unlink never removes a successor
	ino    uint64
	mem    []byte // the whole mapping: header then heap
	heap   []byte
	bell   FutexBell
	closed atomic.Bool
	// A growable segment (grow.go): resv is the reservation of address
	// space for header plus heap limit, mem its mapped start; fd stays
	// open so that further segments of the file can be mapped.
	resv   []byte
	fd     int
	usable atomic.Int64 // heap bytes mapped; changed only by Grow, read by any goroutine
}

// SegmentName returns the file path of job's segment for rank, or an
// ErrInvalidArgument error when job or rank is not acceptable.
func SegmentName(job string, rank int) (string, error) {
	if err := checkJob(job); err != nil {
		return "", errs.New("udma.SegmentName", errs.NoPE, rank, errs.ErrInvalidArgument, "%v", err)
	}
	if rank < 0 {
		return "", errs.New("udma.SegmentName", errs.NoPE, rank, errs.ErrInvalidArgument, "negative rank")
	}
	return segPath(job, rank), nil
}

func segPath(job string, rank int) string {
	return Dir + "/" + namePrefix + job + "-" + strconv.Itoa(rank)
}

// checkJob accepts 1..MaxJobLen characters of [A-Za-z0-9_-]: nothing that
// could leave /dev/shm or confuse a shell.
func checkJob(job string) error {
	if job == "" || len(job) > MaxJobLen {
		return fmt.Errorf("job name length %d not in [1, %d]", len(job), MaxJobLen)
	}
	for i := 0; i < len(job); i++ {
		c := job[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("job name has byte %q at %d; want [A-Za-z0-9_-]", c, i)
		}
	}
	return nil
}

func checkArgs(op string, job string, rank, heapSize int) error {
	if err := checkJob(job); err != nil {
		return errs.New(op, errs.NoPE, rank, errs.ErrInvalidArgument, "%v", err)
	}
	if rank < 0 {
		return errs.New(op, errs.NoPE, rank, errs.ErrInvalidArgument, "negative rank")
	}
	if heapSize < 0 || uint64(heapSize) > MaxHeapSize || heapSize > math.MaxInt-HeaderSize {
		return errs.New(op, errs.NoPE, rank, errs.ErrInvalidArgument, "heap size %d not in [0, %d]", heapSize, int64(MaxHeapSize))
	}
	return nil
}

// osErr wraps an OS failure so that errors.Is matches both the errno (and
// fs.ErrExist and friends) and errs.ErrBootstrap.
func osErr(what string, err error) error {
	return fmt.Errorf("%s: %w: %w", what, err, errs.ErrBootstrap)
}

// Create makes rank's segment of job: a new file in /dev/shm (it fails if
// the name exists; Reap clears a previous run) with a heap of heapSize zero
// bytes, mapped read/write and shared. The caller owns the name: it should
// Unlink it once every peer has opened it, and Close it at the end.
//
// The segment's pages are reserved in /dev/shm when it is created
// (fallocate), so PEs that together overfill /dev/shm (Docker's 64 MiB
// default is the common case) get errs.ErrOutOfMemory here, naming the size
// and the free space, instead of a SIGBUS at a later first touch. The cost:
// the whole heap is committed memory from Init on, as OSHMEM's is.
func Create(job string, rank int, heapSize int) (*Segment, error) {
	return create(job, rank, heapSize, 0)
}

// create is Create, for a heap that may grow to limit bytes when limit is
// above heapSize (grow.go).
func create(job string, rank int, heapSize, limit int) (*Segment, error) {
	const op = "udma.Create"
	if err := checkArgs(op, job, rank, heapSize); err != nil {
		return nil, err
	}
	size := HeaderSize + heapSize
	if _, free, err := ShmInfo(); err == nil && int64(size) > free {
		return nil, errs.New(op, rank, errs.NoPE, errs.ErrOutOfMemory,
			"segment of %d bytes exceeds the %d bytes free in %s", size, free, Dir)
	}
	path := segPath(job, rank)
	fd, unnamed, err := createFile(path)
	if err != nil {
		return nil, errs.New(op, rank, errs.NoPE, osErr("create "+path, err), "")
	}
	defer unix.Close(fd) // the mapping keeps the file's pages
	unlink := func() {
		if !unnamed {
			_ = unix.Unlink(path)
		}
	}
	fail := func(what string, err error) (*Segment, error) {
		unlink()
		return nil, errs.New(op, rank, errs.NoPE, osErr(what+" "+path, err), "")
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fail("stat", err)
	}
	if err := reserve(fd, size); err != nil {
		if errors.Is(err, unix.ENOSPC) {
			unlink()
			_, free, _ := ShmInfo()
			return nil, errs.New(op, rank, errs.NoPE, errs.ErrOutOfMemory,
				"reserving a segment of %d bytes in %s: %d bytes free (the PEs of this host need more together; enlarge %s or shrink SHMEM_SYMMETRIC_SIZE)",
				size, Dir, free, Dir)
		}
		return fail("reserve", err)
	}
	mem, resv, gfd, err := mapSegment(fd, size, heapSize, limit)
	if err != nil {
		return fail("map", err)
	}
	pid := os.Getpid()
	start, _ := procStart(pid)
	ne := binary.NativeEndian
	ne.PutUint64(mem[hdrMagic:], segMagic)
	ne.PutUint32(mem[hdrVersion:], segVersion)
	ne.PutUint32(mem[hdrHdrSize:], HeaderSize)
	ne.PutUint64(mem[hdrHeap:], uint64(heapSize))
	ne.PutUint64(mem[hdrPID:], uint64(pid))
	ne.PutUint64(mem[hdrStart:], start)
	ne.PutUint64(mem[hdrRank:], uint64(rank))
	s := newSegment(job, rank, path, true, &st, mem)
	s.resv, s.fd = resv, gfd
	s.SetState(StateAlive)
	// Publishes the fields above: a reader that sees ready sees them.
	atomic.StoreUint32(word(mem, hdrReady), 1)
	if unnamed {
		if err := nameFile(fd, path); err != nil {
			_ = s.Close()
			return nil, errs.New(op, rank, errs.NoPE, osErr("create "+path, err), "")
		}
	}
	return s, nil
}

// reserve sizes the segment file to size bytes with its pages allocated, so
// that running out of space is an error now rather than a fault at first
// touch; where the file system cannot allocate (EOPNOTSUPP) it falls back
// to a sparse file.
func reserve(fd, size int) error {
	err := unix.Fallocate(fd, 0, 0, int64(size))
	if errors.Is(err, unix.EOPNOTSUPP) {
		err = unix.Ftruncate(fd, int64(size))
	}
	return err
}

// Open maps rank's segment of job, created by a peer on this host. It
// checks the file before mapping a byte of it: a regular file (not a
// symlink) owned by this user, exactly HeaderSize+expectHeap bytes, whose
// header has our magic, version, rank and heap size, and whose owner has
// finished Create. Anything else is an errs.ErrBootstrap error; a missing
// file also matches fs.ErrNotExist, an unfinished one ErrNotReady.
//
// A same-user process that shrinks the file after Open can still make an
// access fault; the check protects against stale and foreign files, not
// against a malicious peer of the same job.
func Open(job string, rank int, expectHeap int) (*Segment, error) {
	return open(job, rank, expectHeap, 0)
}

// open is Open, for a heap that may grow to limit bytes when limit is
// above expectHeap (grow.go).
func open(job string, rank int, expectHeap, limit int) (*Segment, error) {
	const op = "udma.Open"
	if err := checkArgs(op, job, rank, expectHeap); err != nil {
		return nil, err
	}
	path := segPath(job, rank)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, errs.New(op, errs.NoPE, rank, osErr("open "+path, err), "")
	}
	defer unix.Close(fd)
	reject := func(format string, args ...any) (*Segment, error) {
		return nil, errs.New(op, errs.NoPE, rank, errs.ErrBootstrap, path+": "+format, args...)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, errs.New(op, errs.NoPE, rank, osErr("stat "+path, err), "")
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return reject("not a regular file (mode %#o)", st.Mode)
	}
	if int(st.Uid) != os.Geteuid() {
		return reject("owned by uid %d, not %d", st.Uid, os.Geteuid())
	}
	size := HeaderSize + expectHeap
	if st.Size != int64(size) {
		return reject("file is %d bytes, want %d", st.Size, size)
	}
	// Validate with pread, not through a mapping: a file that shrinks under
	// us then fails the read instead of faulting.
	var buf [hdrUsed]byte
	n, err := unix.Pread(fd, buf[:], 0)
	if err != nil {
		return nil, errs.New(op, errs.NoPE, rank, osErr("read "+path, err), "")
	}
	h, err := parseHeader(buf[:n])
	if err != nil {
		return reject("%v", err)
	}
	if !h.ready {
		return nil, errs.New(op, errs.NoPE, rank, fmt.Errorf("%w: %w", ErrNotReady, errs.ErrBootstrap), path)
	}
	if h.heap != uint64(expectHeap) {
		return reject("header says heap of %d bytes, want %d", h.heap, expectHeap)
	}
	if h.rank != uint64(rank) {
		return reject("header says rank %d", h.rank)
	}
	mem, resv, gfd, err := mapSegment(fd, size, expectHeap, limit)
	if err != nil {
		return nil, errs.New(op, errs.NoPE, rank, osErr("map "+path, err), "")
	}
	seg := newSegment(job, rank, path, false, &st, mem)
	seg.resv, seg.fd = resv, gfd
	return seg, nil
}

func newSegment(job string, rank int, path string, owner bool, st *unix.Stat_t, mem []byte) *Segment {
	s := &Segment{
		job: job, rank: rank, path: path, owner: owner,
		dev: uint64(st.Dev), ino: uint64(st.Ino),
		mem: mem, heap: mem[HeaderSize:len(mem):len(mem)], fd: -1,
	}
	s.usable.Store(int64(len(mem) - HeaderSize))
	s.bell = FutexBell{waiters: word(mem, hdrWaiters), seq: word(mem, hdrSeq), data: word(mem, hdrData)}
	return s
}

// word returns the 4-byte header word at off as a pointer for atomics.
func word(mem []byte, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&mem[off]))
}

// Heap returns the segment's heap. Writes by any process that maps the
// segment show up in it; use atomics (transport.ApplyAtomic, Load64) for
// words others write concurrently. It must not be used after Close.
func (s *Segment) Heap() []byte { return s.heap }

// Bell returns the segment's FutexBell: peers Ring it after writing into
// this heap, and the owner's waiters Arm and Wait on it. It must not be
// used after Close.
func (s *Segment) Bell() transport.Bell { return &s.bell }

// Job returns the job name the segment belongs to.
func (s *Segment) Job() string { return s.job }

// Rank returns the rank of the PE whose heap this is.
func (s *Segment) Rank() int { return s.rank }

// Name returns the segment's path in /dev/shm (which may have been
// unlinked since).
func (s *Segment) Name() string { return s.path }

// Owner reports whether this mapping came from Create rather than Open.
func (s *Segment) Owner() bool { return s.owner }

// OwnerPID returns the pid of the process that created the segment.
func (s *Segment) OwnerPID() int {
	return int(binary.NativeEndian.Uint64(s.mem[hdrPID:]))
}

// State returns the life-cycle state the owner last published.
func (s *Segment) State() State { return State(atomic.LoadUint32(word(s.mem, hdrState))) }

// SetState publishes st for every process that maps the segment. Only the
// owner should call it (StateFinalized as it finalizes).
func (s *Segment) SetState(st State) { atomic.StoreUint32(word(s.mem, hdrState), uint32(st)) }

// Unlink removes the segment's name from /dev/shm; every existing mapping
// stays valid and the memory is freed when the last one is closed. It does
// nothing when the name is already gone or now names another file, so
// calling it from every PE, or after Reap, is harmless.
func (s *Segment) Unlink() error {
	var st unix.Stat_t
	if err := unix.Lstat(s.path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return errs.New("udma.Unlink", errs.NoPE, s.rank, osErr("stat "+s.path, err), "")
	}
	if uint64(st.Dev) != s.dev || uint64(st.Ino) != s.ino {
		return nil
	}
	if err := unix.Unlink(s.path); err != nil && !errors.Is(err, unix.ENOENT) {
		return errs.New("udma.Unlink", errs.NoPE, s.rank, osErr("unlink "+s.path, err), "")
	}
	return nil
}

// Close releases the segment's mapping (retire.Mapping): its pages go at
// once, and for retire.Quarantine a placeholder of private memory holds its
// addresses, so that a call that checked the PE ran just before Finalize
// writes into the placeholder instead of faulting. Afterwards slices from
// Heap, the Bell and every method but Unlink and Close touch memory that is
// no longer the segment (and after the quarantine fault), so the caller
// must stop all users first. Close does not unlink the name. Calling it
// again does nothing.
func (s *Segment) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	if s.fd >= 0 {
		_ = unix.Close(s.fd)
	}
	whole := s.mem
	if s.resv != nil {
		whole = s.resv // the reservation holds every segment mapped into it
	}
	if err := retire.Mapping(whole); err != nil {
		return errs.New("udma.Close", errs.NoPE, s.rank, osErr("unmap "+s.path, err), "")
	}
	return nil
}
