package rdma

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

func TestBusyConnReadsWhatArrivesLaterAndEOF(t *testing.T) {
	c, s := tcpPair(t)
	pb := newPollBudget(time.Millisecond)
	bc := newBusyConn(c, pb)
	if _, ok := bc.(*busyConn); !ok {
		t.Fatalf("a TCP connection with spin > 0 is not wrapped: %T", bc)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // writes in pieces, some within the spin and some after it
		defer wg.Done()
		for _, chunk := range [][]byte{[]byte("abc"), []byte("defgh"), bytes.Repeat([]byte("x"), 100<<10)} {
			time.Sleep(2 * time.Millisecond) // pacing the writer, not synchronising
			s.Write(chunk)
		}
		s.Close()
	}()
	got, err := io.ReadAll(bc)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte("abcdefgh"), bytes.Repeat([]byte("x"), 100<<10)...)
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want %d in order", len(got), len(want))
	}
	if pb.polling.Load() != 0 {
		t.Fatal("the node's polling slot is still taken after the reads")
	}
}

func TestBusyConnParksWhileAnotherPolls(t *testing.T) {
	c, s := tcpPair(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // on one P the rule is lifted
	pb := newPollBudget(time.Hour)
	pb.polling.Store(1) // another connection of the node is polling
	bc := newBusyConn(c, pb)
	go func() {
		time.Sleep(time.Millisecond) // pacing only
		s.Write([]byte("ping"))
	}()
	var b [4]byte
	if _, err := io.ReadFull(bc, b[:]); err != nil || string(b[:]) != "ping" {
		t.Fatalf("read %q, %v", b, err)
	}
	if pb.polling.Load() != 1 {
		t.Fatal("a read that did not take the polling slot released it")
	}
}

func TestBusyConnHonoursDeadlineAndClose(t *testing.T) {
	c, _ := tcpPair(t)
	bc := newBusyConn(c, newPollBudget(100*time.Microsecond))
	bc.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
	var b [8]byte
	if _, err := bc.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	bc.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, err := bc.Read(b[:]); done <- err }()
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed connection: %v, want net.ErrClosed", err)
	}
}

func TestBusyConnNotWrapped(t *testing.T) {
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if newBusyConn(p1, newPollBudget(time.Millisecond)) != p1 {
		t.Fatal("a connection that is not TCP must be left as it is")
	}
}

// TestBusyPollWorld runs the data paths with polling reads on both ends,
// TLS included, as a PE process does.
func TestBusyPollWorld(t *testing.T) {
	for _, locked := range []bool{false, true} {
		t.Run(fmt.Sprintf("locked=%v", locked), func(t *testing.T) {
			if locked {
				runtime.LockOSThread() // the test's goroutine, as a C thread's
				defer runtime.UnlockOSThread()
			}
			busyPollWorld(t, locked)
		})
	}
}

func busyPollWorld(t *testing.T, locked bool) {
	w := newWorld(t, 2, 4<<20, func(c *Config) { c.BusyPoll = 200 * time.Microsecond; c.LockedCallers = locked })
	p, eng := w.path(0, 1), w.nodes[0].Engine()
	for i, n := range []int{8, 8<<10 + 1, 1 << 20} {
		src := pattern(n, byte(i))
		if err := p.Put(0, src); err != nil {
			t.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		if err := p.Get(got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) || !bytes.Equal(w.heaps[1][:n], src) {
			t.Fatalf("%d bytes differ after Put, Quiet and Get", n)
		}
	}
	marked := 0
	for _, l := range w.nodes[0].Path(1, w.nodes[1].Addr()).(*path).lanes {
		if l.locked != nil {
			marked++
			if l.locked.locked {
				t.Error("a lane's reads are still marked a locked caller's after the calls")
			}
		}
	}
	if (marked > 0) != locked {
		t.Errorf("locked callers %v, but %d lanes can mark their reads", locked, marked)
	}
}

// TestLockedCallerYieldsLate: a locked caller's poll (Config.LockedCallers)
// yields to goroutines only after lockedYieldAfter; any other read's at once.
func TestLockedCallerYieldsLate(t *testing.T) {
	b := &busyConn{pb: newPollBudget(time.Millisecond), start: time.Now().Add(time.Hour)} // a poll that starts in an hour
	if !b.yieldsToGoroutines() {
		t.Error("an unlocked read's poll does not yield to goroutines")
	}
	b.locked = true
	if b.yieldsToGoroutines() {
		t.Error("a locked caller's poll yields to goroutines before lockedYieldAfter")
	}
	b.start = time.Now().Add(-2 * lockedYieldAfter)
	if !b.yieldsToGoroutines() {
		t.Errorf("a locked caller's poll does not yield to goroutines after %v", 2*lockedYieldAfter)
	}
}

// TestPollBudgetTake: with several Ps one read of the node polls at a
// time; with one P every read may.
func TestPollBudgetTake(t *testing.T) {
	pb := newPollBudget(time.Millisecond)
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	if !pb.take() || pb.take() {
		t.Fatal("two Ps: the first read must take the right to poll, the second not")
	}
	runtime.GOMAXPROCS(1)
	if !pb.take() {
		t.Fatal("one P: a second read must poll too")
	}
	pb.release()
	pb.release()
	if got := pb.polling.Load(); got != 0 {
		t.Fatalf("%d reads still counted as polling after every release", got)
	}
}

// TestPollBudgetProbes: a spent budget still lets one read in probeEvery
// poll for the whole max, and a poll that is answered restores it.
func TestPollBudgetProbes(t *testing.T) {
	pb := newPollBudget(64 * time.Microsecond)
	pb.budget.Store(0)
	probes := 0
	for i := 0; i < 4*probeEvery; i++ {
		switch d := pb.allowed(time.Now()); d {
		case 0:
		case 64 * time.Microsecond:
			probes++
		default:
			t.Fatalf("allowed %v with a spent budget, want 0 or the max", d)
		}
	}
	if probes != 4 {
		t.Fatalf("%d probes in %d reads, want 4", probes, 4*probeEvery)
	}
	pb.answered()
	if got := time.Duration(pb.budget.Load()); got != 64*time.Microsecond {
		t.Fatalf("budget after an answered poll %v, want 64µs", got)
	}
}

func TestPollBudgetAdapts(t *testing.T) {
	pb := newPollBudget(64 * time.Microsecond)
	for want := 32 * time.Microsecond; want >= time.Microsecond; want /= 2 {
		pb.expired()
		if got := time.Duration(pb.budget.Load()); got != want {
			t.Fatalf("after an unanswered poll the budget is %v, want %v", got, want)
		}
	}
	pb.expired()
	if got := pb.budget.Load(); got != 0 {
		t.Fatalf("budget %v below 1 µs, want 0 (park at once)", time.Duration(got))
	}
	pb.parkedFor(time.Millisecond)
	if got := pb.budget.Load(); got != 0 {
		t.Fatal("a long park must not restore polling")
	}
	pb.parkedFor(10 * time.Microsecond)
	if got := time.Duration(pb.budget.Load()); got != 64*time.Microsecond {
		t.Fatalf("after a park shorter than the maximum the budget is %v, want 64µs", got)
	}
}

// A late yield makes polling rest, for longer while contention lasts and
// shorter again once polls are answered without it.
func TestPollBudgetRestsUnderContention(t *testing.T) {
	pb := newPollBudget(50 * time.Microsecond)
	t0 := time.Unix(1000, 0)
	if pb.contended(t0, stolen-time.Microsecond) || pb.allowed(t0) != 50*time.Microsecond {
		t.Fatal("a prompt yield stopped polling")
	}
	rests := []time.Duration{minRest, 2 * minRest, 4 * minRest}
	now := t0
	for _, rest := range rests {
		for range strikes - 1 {
			if pb.contended(now, stolen) {
				t.Fatal("fewer late yields in a row than strikes stopped polling")
			}
		}
		if pb.contended(now, time.Microsecond) {
			t.Fatal("a prompt yield stopped polling")
		}
		for range strikes - 1 {
			pb.contended(now, stolen)
		}
		if !pb.contended(now, stolen) {
			t.Fatal("strikes late yields in a row were not taken for contention")
		}
		if pb.allowed(now.Add(rest-time.Nanosecond)) != 0 {
			t.Fatalf("polling allowed before a rest of %v ended", rest)
		}
		now = now.Add(rest)
		if pb.allowed(now) != 50*time.Microsecond {
			t.Fatalf("polling not allowed once a rest of %v ended", rest)
		}
	}
	pb.answered()
	for range strikes {
		pb.contended(now, time.Millisecond)
	}
	if pb.allowed(now.Add(4*minRest-time.Nanosecond)) != 0 || pb.allowed(now.Add(4*minRest)) == 0 {
		t.Fatal("an answered poll did not halve the next rest")
	}
	for range 20 * strikes {
		pb.contended(now, time.Millisecond)
	}
	if got := time.Duration(pb.rest.Load()); got != maxRest {
		t.Fatalf("rest grew to %v, want at most %v", got, maxRest)
	}
}

// TestPollBudgetStrikesWithinAWindow: late yields count toward a rest only
// within strikeWindow of the first of them. Slices a VM's kernel threads
// take now and then, a second apart, made every third start a rest, and
// small round trips parked for most of a run; oversubscribed cores return
// late yields a slice (a few ms) apart.
func TestPollBudgetStrikesWithinAWindow(t *testing.T) {
	const sparse, slice = time.Second, 5 * time.Millisecond
	pb := newPollBudget(50 * time.Microsecond)
	now := time.Unix(1000, 0)
	for i := range 10 * strikes {
		if pb.contended(now, sliceStolen) {
			t.Fatalf("late yield %d, %v after the last: a rest", i+1, sparse)
		}
		now = now.Add(sparse)
	}
	// A streak whose first yield was long ago starts over.
	for range strikes - 1 {
		pb.contended(now, sliceStolen)
	}
	now = now.Add(sparse)
	for i := range strikes - 1 {
		if pb.contended(now, sliceStolen) {
			t.Fatalf("late yield %d of a new streak: a rest", i+1)
		}
		now = now.Add(slice)
	}
	if !pb.contended(now, sliceStolen) {
		t.Fatalf("%d late yields %v apart: no rest", strikes, slice)
	}
}

// TestBusyConnGivesUpPollingWhenUnanswered: a read whose poll expires
// halves the node's budget before it parks. A poll that a loaded machine
// ends first (a late yield: pollBudget.contended) proves nothing about
// expiry (a preemption between its clock reads still can, though the
// test's yields return at once), so the run is repeated then.
func TestBusyConnGivesUpPollingWhenUnanswered(t *testing.T) {
	for attempt := 0; attempt < 50; attempt++ {
		if pollExpires(t) {
			return
		}
	}
	t.Fatal("50 polls in a row ended by contention, none by expiry")
}

// pollExpires runs one unanswered poll; it reports false when contention
// ended the poll before it expired.
func pollExpires(t *testing.T) bool {
	c, s := tcpPair(t)
	pb := newPollBudget(50 * time.Microsecond)
	pb.osYield = func() {} // other processes' slices are not this test's
	bc := newBusyConn(c, pb)
	seen := make(chan time.Duration, 1)
	go func() {
		// Write only once the reader's poll has expired, or a late
		// yield has ended it.
		for pb.budget.Load() == int64(50*time.Microsecond) && pb.late.Load() == 0 {
			runtime.Gosched()
		}
		seen <- time.Duration(pb.budget.Load())
		s.Write([]byte("late"))
	}()
	var b [4]byte
	if _, err := io.ReadFull(bc, b[:]); err != nil || string(b[:]) != "late" {
		t.Fatalf("read %q, %v", b, err)
	}
	got := <-seen
	if pb.polling.Load() != 0 {
		t.Fatal("the polling slot is still taken")
	}
	if got == 50*time.Microsecond {
		return false // contention ended it: pb.late moved
	}
	if got != 25*time.Microsecond {
		t.Fatalf("budget after the poll expired: %v, want 25µs", got)
	}
	return true
}

// TestBusyConnWithoutBudget: with no budget (SHMEM_BUSY_POLL=0) the
// connection is still wrapped, for its raw reads and writes, and its reads
// park at once without touching a budget.
func TestBusyConnWithoutBudget(t *testing.T) {
	c, s := tcpPair(t)
	bc := newBusyConn(c, nil)
	if _, ok := bc.(*busyConn); !ok {
		t.Fatalf("a TCP connection without a budget is not wrapped: %T", bc)
	}
	go func() {
		time.Sleep(time.Millisecond) // pacing only: the read parks first
		s.Write([]byte("ping"))
	}()
	var b [4]byte
	if _, err := io.ReadFull(bc, b[:]); err != nil || string(b[:]) != "ping" {
		t.Fatalf("read %q, %v", b, err)
	}
}

// TestBusyConnWrites: small writes (raw system calls) and large ones
// arrive whole and in order, a write that cannot proceed waits for the
// socket and honours the write deadline, and writes on a closed or reset
// connection fail as net.Conn's do.
func TestBusyConnWrites(t *testing.T) {
	c, s := tcpPair(t)
	bc := newBusyConn(c, nil)
	var want []byte
	for i, n := range []int{1, 56, rawWriteMax, rawWriteMax + 1, 1 << 20, 3} {
		want = append(want, pattern(n, byte(i))...)
	}
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(want))
		io.ReadFull(s, b)
		got <- b
	}()
	for i, n := range []int{1, 56, rawWriteMax, rawWriteMax + 1, 1 << 20, 3} {
		if k, err := bc.Write(pattern(n, byte(i))); err != nil || k != n {
			t.Fatalf("write of %d bytes: %d, %v", n, k, err)
		}
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatal("the peer read other bytes than were written")
	}

	// Nobody reads s now: small writes fill both socket buffers, then one
	// waits for the socket until the deadline.
	bc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	small := make([]byte, 4096)
	var err error
	for total := 0; err == nil && total < 1<<30; total += len(small) {
		_, err = bc.Write(small)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write with a full socket: %v, want os.ErrDeadlineExceeded", err)
	}

	c2, s2 := tcpPair(t)
	bc2 := newBusyConn(c2, nil)
	s2.(*net.TCPConn).SetLinger(0)
	s2.Close() // a reset: writes fail (EPIPE or ECONNRESET)
	for i := 0; err == nil || errors.Is(err, os.ErrDeadlineExceeded); i++ {
		if i == 1000 {
			t.Fatal("writes to a reset connection keep succeeding")
		}
		_, err = bc2.Write([]byte("x"))
	}
	var op *net.OpError
	if !errors.As(err, &op) || !(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("write to a reset connection: %v (%T), want a *net.OpError of EPIPE or ECONNRESET", err, err)
	}
	bc2.Close()
	if _, err := bc2.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write on a closed connection: %v, want net.ErrClosed", err)
	}
}

// TestPollParksAfterAStolenSlice: a poll whose yield to other threads
// returns a time slice late (a CPU-bound process had the core) parks at
// once and strikes, instead of yielding again every 4 reads until its
// budget ends. The yield stands in for that process: it takes
// sliceStolen and more.
func TestPollParksAfterAStolenSlice(t *testing.T) {
	c, s := tcpPair(t)
	pb := newPollBudget(time.Hour) // only the late yield can end this poll
	var yields atomic.Int32
	pb.osYield = func() {
		yields.Add(1)
		time.Sleep(sliceStolen + 100*time.Microsecond) // the slice another process ran
	}
	bc := newBusyConn(c, pb)
	got := make(chan error, 1)
	go func() {
		var b [1]byte
		_, err := io.ReadFull(bc, b[:])
		got <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for yields.Load() == 0 || pb.polling.Load() != 0 { // parked: it gave up the right to poll
		if time.Now().After(deadline) {
			t.Fatalf("the poll still polls after %d late yields", yields.Load())
		}
		runtime.Gosched()
	}
	s.Write([]byte{1})
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := yields.Load(); n != 1 {
		t.Errorf("%d yields, want 1: the poll went on after a stolen slice", n)
	}
	if pb.late.Load() != 1 {
		t.Errorf("late yields %d, want 1 strike", pb.late.Load())
	}
}

// TestRestCallsOnContended: the start of a rest for contention is reported
// (Config.OnContended) once per rest, not for each late yield.
func TestRestCallsOnContended(t *testing.T) {
	pb := newPollBudget(time.Millisecond)
	var rests int
	pb.onRest = func() { rests++ }
	now := time.Now()
	for i := 0; i < strikes-1; i++ {
		if pb.contended(now, sliceStolen) {
			t.Fatalf("rest after %d late yields, want %d", i+1, strikes)
		}
	}
	if rests != 0 {
		t.Fatalf("%d rests reported before the rest", rests)
	}
	if !pb.contended(now, sliceStolen) || rests != 1 {
		t.Fatalf("after %d late yields: %d rests reported, want 1", strikes, rests)
	}
	pb.contended(now, time.Microsecond) // an answered yield: no rest
	if rests != 1 {
		t.Fatalf("%d rests reported after an early yield", rests)
	}
}
