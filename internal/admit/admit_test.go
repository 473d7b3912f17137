package admit

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem/internal/netprobe"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// flakyListener fails its first n Accepts with EMFILE, as a process out of
// descriptors does, then behaves.
type flakyListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
}

func (f *flakyListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	if f.fails > 0 {
		f.fails--
		f.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	f.mu.Unlock()
	return f.Listener.Accept()
}

func listen(t *testing.T) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// An EMFILE is retried: the connection that comes after it is served.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	ln := &flakyListener{Listener: listen(t), fails: 3}
	var logged bytes.Buffer
	a := New(ln, Config{Name: "test", Logger: slog.New(slog.NewTextHandler(&logged, nil)), LogEvery: time.Hour})
	done := make(chan error, 1)
	go func() {
		c, admitted, err := a.Accept()
		if err == nil {
			admitted()
			c.Write([]byte("ok"))
			c.Close()
		}
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(c)
	c.Close()
	if err := <-done; err != nil || string(got) != "ok" {
		t.Fatalf("after EMFILE: %q, %v", got, err)
	}
	ln.Close()
	if _, _, err := a.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept on a closed listener: %v", err)
	}
	// Three failures, one line: the rest fall within LogEvery.
	if n := strings.Count(logged.String(), "accept failed"); n != 1 {
		t.Fatalf("%d log lines for 3 accept errors:\n%s", n, logged.String())
	}
}

// Beyond MaxPending unadmitted connections, a new one evicts the oldest
// (closed before a byte is read); admitted connections do not count.
// acc is a connection Accept returned, with its admitted func.
type acc struct {
	c        net.Conn
	admitted func()
}

// acceptAll accepts on a until it fails, sending each connection; the
// channel closes then.
func acceptAll(a *Acceptor) <-chan acc {
	accepted := make(chan acc)
	go func() {
		for {
			c, admitted, err := a.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- acc{c, admitted}
		}
	}()
	return accepted
}

func dialTo(t *testing.T, ln net.Listener) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAcceptBoundsPending(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	a := New(ln, Config{MaxPending: 2})
	accepted := acceptAll(a)
	dial := func() net.Conn {
		c := dialTo(t, ln)
		return c
	}
	c1 := dial()
	a1 := <-accepted
	a1.admitted() // authenticated: no longer pending
	c2, c3 := dial(), dial()
	a2, a3 := <-accepted, <-accepted
	c4 := dial()
	a4 := <-accepted
	// The fourth evicted the oldest pending one, the second: its client
	// reads EOF, while the admitted first stays open.
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("oldest pending connection: read %v, want EOF", err)
	}
	if _, err := a1.c.Write([]byte("x")); err != nil {
		t.Fatalf("admitted connection: %v", err)
	}
	if a.Pending() != 2 {
		t.Fatalf("pending %d, want 2", a.Pending())
	}
	a2.admitted() // the evicted owner's call finds it gone
	if a.Pending() != 2 {
		t.Fatalf("pending %d after the evicted one's admitted, want 2", a.Pending())
	}
	for _, c := range []net.Conn{c1, c2, c3, c4, a1.c, a2.c, a3.c, a4.c} {
		c.Close()
	}
	a3.admitted()
	a4.admitted()
	ln.Close()
	for range accepted {
	}
}

// With TellEvicted, an evicted connection the owner had not written to is
// told Busy before it closes, even when its client's bytes lie unread (the
// close then resets it); one the owner had answered is only closed, so that
// Busy never lands inside its stream; and the owner's writes to an evicted
// connection fail. A liveness probe evicted so reads the listener as alive.
func TestEvictedAreToldBusy(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	a := New(ln, Config{MaxPending: 1, TellEvicted: true})
	accepted := acceptAll(a)
	dial := func() net.Conn {
		c := dialTo(t, ln)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		return c
	}
	var owned []acc
	defer func() {
		for _, o := range owned {
			o.c.Close()
			o.admitted()
		}
	}()
	// Silent, with the client's hello unread: told Busy.
	c1 := dial()
	defer c1.Close()
	c1.Write([]byte("GSHA\x02C"))
	owned = append(owned, <-accepted)
	// Answered by the owner: only closed.
	c2 := dial()
	defer c2.Close()
	owned = append(owned, <-accepted)
	if got, _ := io.ReadAll(c1); string(got) != Busy || !IsBusy(got) {
		t.Fatalf("silent evicted connection read %q, want %q", got, Busy)
	}
	if _, err := owned[0].c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("owner's write to an evicted connection: %v", err)
	}
	if _, err := owned[1].c.Write([]byte("GSHA")); err != nil {
		t.Fatal(err)
	}
	c3 := dial()
	defer c3.Close()
	owned = append(owned, <-accepted)
	if got, _ := io.ReadAll(c2); string(got) != "GSHA" {
		t.Fatalf("answered evicted connection read %q, want only the owner's bytes", got)
	}
	// A probe of the listener, evicted by the next connection, finds it
	// alive: it reads Busy, not an end of stream.
	gone := make(chan bool, 1)
	go func() { gone <- netprobe.ListenerGone(ln.Addr().String(), 10*time.Second) }()
	owned = append(owned, <-accepted) // the probe's connection
	c4 := dial()
	defer c4.Close()
	owned = append(owned, <-accepted)
	if <-gone {
		t.Fatal("an evicted probe took the live listener for gone")
	}
	if IsBusy(nil) || IsBusy([]byte("GSHA")) || !IsBusy([]byte(Busy[:5])) {
		t.Fatal("IsBusy")
	}
}

// TestSpeakThroughRaw: an owner that writes through the socket under a
// connection (Raw) and says so first (Speak) gets what an owner writing
// through the connection gets: once it spoke, an eviction only closes the
// connection; once evicted (the client told Busy), Speak refuses.
func TestSpeakThroughRaw(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	a := New(ln, Config{MaxPending: 1, TellEvicted: true})
	accepted := acceptAll(a)
	var owned []acc
	defer func() {
		for _, o := range owned {
			o.c.Close()
			o.admitted()
		}
	}()
	c1 := dialTo(t, ln)
	defer c1.Close()
	c1.SetReadDeadline(time.Now().Add(10 * time.Second))
	owned = append(owned, <-accepted)
	if _, ok := Raw(owned[0].c).(*net.TCPConn); !ok {
		t.Fatalf("Raw gave %T, want the *net.TCPConn", Raw(owned[0].c))
	}
	if !Speak(owned[0].c) {
		t.Fatal("Speak refused a connection nobody evicted")
	}
	if _, err := Raw(owned[0].c).Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	c2 := dialTo(t, ln)
	defer c2.Close()
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	owned = append(owned, <-accepted) // evicts c1's, spoken
	if got, _ := io.ReadAll(c1); string(got) != "hi" {
		t.Fatalf("spoken evicted connection read %q, want only the owner's bytes", got)
	}
	c3 := dialTo(t, ln)
	defer c3.Close()
	owned = append(owned, <-accepted) // evicts c2's, silent: told Busy
	if got, _ := io.ReadAll(c2); !IsBusy(got) {
		t.Fatalf("silent evicted connection read %q, want %q", got, Busy)
	}
	if Speak(owned[1].c) {
		t.Error("Speak accepted an evicted connection")
	}
	if !Speak(c3) || Raw(c3) != c3 {
		t.Error("Speak or Raw changed a connection no telling acceptor returned")
	}
}
