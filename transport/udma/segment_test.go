package udma

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Child processes are this test binary re-executed with childRole set.
const (
	childRole = "GOSHMEM_UDMA_TEST_ROLE"
	childJob  = "GOSHMEM_UDMA_TEST_JOB"
	childHeap = "GOSHMEM_UDMA_TEST_HEAP"
	childAdds = 100000
	flagValue = 42
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childRole); role != "" {
		os.Exit(runChild(role, os.Getenv(childJob), os.Getenv(childHeap)))
	}
	goleak.VerifyTestMain(m)
}

// runChild plays one side of a cross-process test and returns the exit
// status: 0 only when it observed what the test expects.
func runChild(role, job, heapStr string) int {
	heap, err := strconv.Atoi(heapStr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad heap:", err)
		return 10
	}
	in := bufio.NewReader(os.Stdin)
	switch role {
	case "adder": // 100000 adds on word 0, started by a line on stdin
		s, err := Open(job, 0, heap)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 11
		}
		fmt.Println("ready")
		if _, err := in.ReadString('\n'); err != nil {
			return 12
		}
		for range childAdds {
			transport.ApplyAtomic(s.Heap(), transport.AtomicFetchAdd, 8, 0, 1, 0)
		}
		return 0
	case "waiter": // sleeps on the bell until word 8 holds flagValue
		s, err := Open(job, 0, heap)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 11
		}
		bell := s.Bell()
		armed := bell.Arm()
		if transport.Load64(s.Heap(), 8) == flagValue {
			return 13 // the parent sets the flag only after "waiting"
		}
		fmt.Println("waiting")
		bell.Wait(armed, time.Hour) // a lost ring hangs until the parent's deadline
		after := bell.Arm()
		bell.Disarm()
		bell.Disarm()
		if after == armed {
			fmt.Fprintln(os.Stderr, "woke without a ring")
			return 14
		}
		if v := transport.Load64(s.Heap(), 8); v != flagValue {
			fmt.Fprintln(os.Stderr, "flag is", v)
			return 15
		}
		return 0
	case "crasher": // creates two segments and blocks until killed
		for rank := range 2 {
			if _, err := Create(job, rank, heap); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 11
			}
		}
		fmt.Println("created")
		_, _ = io.ReadAll(in)
		return 16
	}
	return 17
}

// child is a running re-executed test binary.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
	cancel context.CancelFunc
}

func startChild(t *testing.T, role, job string, heap int) *child {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRole+"="+role, childJob+"="+job, childHeap+"="+strconv.Itoa(heap))
	c := &child{cmd: cmd, stderr: new(bytes.Buffer), cancel: cancel}
	cmd.Stderr = c.stderr
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cancel(); _ = c.cmd.Wait() })
	return c
}

// expect reads one line from the child and fails unless it is want.
func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	line, err := c.stdout.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("child said %q (%v), want %q; stderr: %s", line, err, want, c.stderr)
	}
}

// wait waits for the child and fails unless it exited 0.
func (c *child) wait(t *testing.T) {
	t.Helper()
	_ = c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v; stderr: %s", err, c.stderr)
	}
}

// testJob returns a job name unique to this process and test, and checks at
// the end of the test that /dev/shm holds nothing of it.
func testJob(t testing.TB) string {
	t.Helper()
	name := []byte(fmt.Sprintf("t%d-%s", os.Getpid(), t.Name()))
	for i, c := range name {
		if checkJob(string(c)) != nil {
			name[i] = '_'
		}
	}
	if len(name) > MaxJobLen {
		name = name[:MaxJobLen]
	}
	job := string(name)
	if left, _ := List(job); len(left) > 0 {
		t.Fatalf("job %s already has segments: %v", job, left)
	}
	t.Cleanup(func() {
		left, err := List(job)
		if err != nil || len(left) > 0 {
			t.Errorf("/dev/shm still holds %v (%v)", left, err)
			_, _ = Reap(job)
		}
	})
	return job
}

// mustCreate creates a segment that the test closes and unlinks at its end.
func mustCreate(t *testing.T, job string, rank, heap int) *Segment {
	t.Helper()
	s, err := Create(job, rank, heap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Unlink(); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func mustOpen(t *testing.T, job string, rank, heap int) *Segment {
	t.Helper()
	s, err := Open(job, rank, heap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestCreateOpen(t *testing.T) {
	job := testJob(t)
	const heap = 1 << 16
	s := mustCreate(t, job, 3, heap)
	if len(s.Heap()) != heap || cap(s.Heap()) != heap {
		t.Fatalf("heap len %d cap %d, want %d", len(s.Heap()), cap(s.Heap()), heap)
	}
	if !bytes.Equal(s.Heap(), make([]byte, heap)) {
		t.Fatal("new heap is not zero")
	}
	if s.Job() != job || s.Rank() != 3 || !s.Owner() || s.OwnerPID() != os.Getpid() {
		t.Fatalf("job %q rank %d owner %v pid %d", s.Job(), s.Rank(), s.Owner(), s.OwnerPID())
	}
	if want := Dir + "/goshmem-" + job + "-3"; s.Name() != want {
		t.Fatalf("name %q, want %q", s.Name(), want)
	}
	if s.State() != StateAlive {
		t.Fatalf("state %d, want alive", s.State())
	}
	var st unix.Stat_t
	if err := unix.Stat(s.Name(), &st); err != nil || st.Mode&0o777 != 0o600 || st.Size != HeaderSize+heap {
		t.Fatalf("stat: %v mode %#o size %d", err, st.Mode, st.Size)
	}

	p := mustOpen(t, job, 3, heap)
	if p.Owner() || p.OwnerPID() != os.Getpid() || p.State() != StateAlive {
		t.Fatalf("peer: owner %v pid %d state %d", p.Owner(), p.OwnerPID(), p.State())
	}
	s.SetState(StateFinalized)
	if p.State() != StateFinalized {
		t.Fatalf("peer sees state %d, want finalized", p.State())
	}

	// The name goes, the mappings stay.
	if err := s.Unlink(); err != nil {
		t.Fatal(err)
	}
	if err := p.Unlink(); err != nil {
		t.Fatalf("second unlink: %v", err)
	}
	if _, err := Open(job, 3, heap); !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("open after unlink: %v", err)
	}
	copy(s.Heap()[100:], "after unlink")
	if got := string(p.Heap()[100:112]); got != "after unlink" {
		t.Fatalf("peer reads %q", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func TestCreateExisting(t *testing.T) {
	job := testJob(t)
	mustCreate(t, job, 0, 4096)
	_, err := Create(job, 0, 4096)
	if !errors.Is(err, fs.ErrExist) || !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("second create: %v", err)
	}
	if got, _ := List(job); len(got) != 1 || !got[0].Valid {
		t.Fatalf("the failed create disturbed the segment: %+v", got)
	}
}

func TestCreateZeroHeap(t *testing.T) {
	job := testJob(t)
	s := mustCreate(t, job, 0, 0)
	if len(s.Heap()) != 0 {
		t.Fatalf("heap len %d", len(s.Heap()))
	}
	mustOpen(t, job, 0, 0)
}

func TestCreateInvalid(t *testing.T) {
	job := testJob(t)
	cases := []struct {
		job        string
		rank, heap int
	}{
		{"", 0, 0},
		{"a/b", 0, 0},
		{"..", 0, 0},
		{"a b", 0, 0},
		{"a.b", 0, 0},
		{"jöb", 0, 0},
		{strings.Repeat("j", MaxJobLen+1), 0, 0},
		{job, -1, 0},
		{job, 0, -1},
		{job, 0, MaxHeapSize + 1},
	}
	for _, c := range cases {
		if _, err := Create(c.job, c.rank, c.heap); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Create(%q, %d, %d): %v", c.job, c.rank, c.heap, err)
		}
		if _, err := Open(c.job, c.rank, c.heap); !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("Open(%q, %d, %d): %v", c.job, c.rank, c.heap, err)
		}
	}
	if _, err := SegmentName("x/y", 0); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Errorf("SegmentName: %v", err)
	}
	if n, err := SegmentName(job, 7); err != nil || n != Dir+"/goshmem-"+job+"-7" {
		t.Errorf("SegmentName: %q %v", n, err)
	}
}

func TestCreateTooBig(t *testing.T) {
	job := testJob(t)
	_, free, err := ShmInfo()
	if err != nil {
		t.Fatal(err)
	}
	if free+1 > MaxHeapSize {
		t.Skip("/dev/shm is larger than MaxHeapSize")
	}
	if _, err := Create(job, 0, int(free+1)); !errors.Is(err, errs.ErrOutOfMemory) {
		t.Fatalf("Create larger than /dev/shm: %v", err)
	}
}

// validHeader returns the first HeaderSize bytes of a finished segment.
func validHeader(heap, rank int) []byte {
	b := make([]byte, HeaderSize)
	ne := binary.NativeEndian
	ne.PutUint64(b[hdrMagic:], segMagic)
	ne.PutUint32(b[hdrVersion:], segVersion)
	ne.PutUint32(b[hdrHdrSize:], HeaderSize)
	ne.PutUint64(b[hdrHeap:], uint64(heap))
	ne.PutUint64(b[hdrPID:], uint64(os.Getpid()))
	ne.PutUint64(b[hdrRank:], uint64(rank))
	ne.PutUint32(b[hdrReady:], 1)
	ne.PutUint32(b[hdrState:], uint32(StateAlive))
	return b
}

// plant writes a file under a segment's name, as a stale or hostile
// process might, and removes it at the end of the test.
func plant(t *testing.T, job string, rank int, content []byte, size int64) string {
	t.Helper()
	path := segPath(job, rank)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(path) })
	if _, err := f.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenRejects(t *testing.T) {
	job := testJob(t)
	const heap = 8192
	good := mustCreate(t, job, 0, heap)
	edit := func(f func(b []byte)) []byte {
		b := validHeader(heap, 0)
		f(b)
		return b
	}
	ne := binary.NativeEndian
	cases := []struct {
		name    string
		content []byte
		size    int64
	}{
		{"empty", nil, 0},
		{"truncated header", validHeader(heap, 1)[:100], 100},
		{"truncated heap", validHeader(heap, 1), HeaderSize + heap/2},
		{"zeros", nil, HeaderSize + heap},
		{"wrong magic", edit(func(b []byte) { b[0] ^= 1 }), HeaderSize + heap},
		{"wrong version", edit(func(b []byte) { ne.PutUint32(b[hdrVersion:], 9) }), HeaderSize + heap},
		{"wrong header size", edit(func(b []byte) { ne.PutUint32(b[hdrHdrSize:], 8192) }), HeaderSize + heap},
		{"header heap differs", edit(func(b []byte) { ne.PutUint64(b[hdrHeap:], heap*2) }), HeaderSize + heap},
		{"bad pid", edit(func(b []byte) { ne.PutUint64(b[hdrPID:], 0) }), HeaderSize + heap},
		{"rank differs", validHeader(heap, 0), HeaderSize + heap},
		{"oversized", validHeader(heap, 1), HeaderSize + 2*heap},
	}
	for i, c := range cases {
		rank := 10 + i
		content := bytes.Clone(c.content)
		if len(content) > hdrRank+8 && c.name != "rank differs" {
			ne.PutUint64(content[hdrRank:], uint64(rank))
		}
		plant(t, job, rank, content, c.size)
		_, err := Open(job, rank, heap)
		if !errors.Is(err, errs.ErrBootstrap) {
			t.Errorf("%s: Open: %v", c.name, err)
		}
		t.Logf("%s: %v", c.name, err)
	}

	// Not ready: the owner has not finished Create.
	nr := validHeader(heap, 5)
	ne.PutUint32(nr[hdrReady:], 0)
	plant(t, job, 5, nr, HeaderSize+heap)
	if _, err := Open(job, 5, heap); !errors.Is(err, ErrNotReady) || !errors.Is(err, errs.ErrBootstrap) {
		t.Errorf("not ready: %v", err)
	}

	// The right file with the wrong expectation.
	if _, err := Open(job, 0, heap*2); !errors.Is(err, errs.ErrBootstrap) {
		t.Errorf("wrong expected size: %v", err)
	}

	// A symlink to a valid segment is not followed.
	link := segPath(job, 6)
	if err := os.Symlink(good.Name(), link); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(link) })
	if _, err := Open(job, 6, heap); !errors.Is(err, errs.ErrBootstrap) || !errors.Is(err, unix.ELOOP) {
		t.Errorf("symlink: %v", err)
	}

	// A FIFO and a directory are not regular files; opening must not block.
	fifo := segPath(job, 7)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(fifo) })
	if _, err := Open(job, 7, heap); !errors.Is(err, errs.ErrBootstrap) {
		t.Errorf("fifo: %v", err)
	}
	dir := segPath(job, 8)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(dir) })
	if _, err := Open(job, 8, heap); !errors.Is(err, errs.ErrBootstrap) {
		t.Errorf("directory: %v", err)
	}

	// The planted header itself is right: with the real size it opens.
	plant(t, job, 9, validHeader(heap, 9), HeaderSize+heap)
	s, err := Open(job, 9, heap)
	if err != nil {
		t.Fatalf("planted valid segment: %v", err)
	}
	_ = s.Close()
}

// Two mappings of one segment in one process are distinct addresses over
// the same pages.
func TestTwoMappings(t *testing.T) {
	job := testJob(t)
	const heap = 1 << 12
	s := mustCreate(t, job, 0, heap)
	a := mustOpen(t, job, 0, heap)
	b := mustOpen(t, job, 0, heap)
	if &a.Heap()[0] == &b.Heap()[0] || &a.Heap()[0] == &s.Heap()[0] {
		t.Fatal("mappings share an address")
	}
	copy(a.Heap()[64:], "written through a")
	if got := string(b.Heap()[64:81]); got != "written through a" {
		t.Fatalf("b reads %q", got)
	}
	const per = 50000
	var wg sync.WaitGroup
	for _, m := range []*Segment{s, a, b} {
		wg.Go(func() {
			for range per {
				transport.ApplyAtomic(m.Heap(), transport.AtomicFetchAdd, 8, 0, 1, 0)
				transport.ApplyAtomic(m.Heap(), transport.AtomicFetchAdd, 4, 8, 1, 0)
			}
		})
	}
	wg.Wait()
	if got := transport.Load64(s.Heap(), 0); got != 3*per {
		t.Fatalf("64-bit sum %d, want %d", got, 3*per)
	}
	if got := transport.Load32(b.Heap(), 8); got != 3*per {
		t.Fatalf("32-bit sum %d, want %d", got, 3*per)
	}
}

func TestCrossProcessAtomics(t *testing.T) {
	job := testJob(t)
	const heap = 4096
	s := mustCreate(t, job, 0, heap)
	c := startChild(t, "adder", job, heap)
	c.expect(t, "ready")
	if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	for range childAdds {
		transport.ApplyAtomic(s.Heap(), transport.AtomicFetchAdd, 8, 0, 1, 0)
	}
	c.wait(t)
	if got := transport.Load64(s.Heap(), 0); got != 2*childAdds {
		t.Fatalf("sum %d, want %d", got, 2*childAdds)
	}
}

func TestCrossProcessBell(t *testing.T) {
	job := testJob(t)
	const heap = 4096
	s := mustCreate(t, job, 0, heap)
	c := startChild(t, "waiter", job, heap)
	c.expect(t, "waiting")
	transport.ApplySignal(s.Heap(), 8, flagValue, transport.SignalSet)
	s.Bell().Ring()
	c.wait(t)
}

func FuzzParseHeader(f *testing.F) {
	f.Add(validHeader(4096, 0)[:hdrUsed])
	f.Add(make([]byte, hdrUsed))
	f.Add([]byte("short"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHeader(b)
		if err != nil {
			return
		}
		if h.heap > MaxHeapSize || h.pid <= 0 || h.pid > maxPID {
			t.Fatalf("accepted %+v", h)
		}
	})
}

// TestCreateUnnamedUntilComplete: on tmpfs a segment under construction has
// no name, so a process killed inside Create leaves nothing in /dev/shm;
// the name appears only when nameFile links the finished file.
func TestCreateUnnamedUntilComplete(t *testing.T) {
	job := testJob(t)
	path := segPath(job, 0)
	fd, unnamed, err := createFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !unnamed {
		t.Skip("this /dev/shm has no O_TMPFILE")
	}
	if got, _ := List(job); len(got) != 0 {
		t.Fatalf("a segment under construction is listed: %+v", got)
	}
	if err := nameFile(fd, path); err != nil {
		t.Fatal(err)
	}
	defer unix.Unlink(path)
	if got, _ := List(job); len(got) != 1 {
		t.Fatalf("after nameFile: %+v", got)
	}
	if err := nameFile(fd, path); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("naming over an existing segment: %v", err)
	}
}
