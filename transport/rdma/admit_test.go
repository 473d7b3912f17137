package rdma

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/admit"
	"github.com/goshmem/shmem/transport"
)

// jobToken is a stand-in for the job-secret handshake: the client writes
// a token, the server reads and checks it.
func jobToken(c net.Conn, server bool) error {
	tok := []byte("job!")
	if !server {
		_, err := c.Write(tok)
		return err
	}
	got := make([]byte, len(tok))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, tok) {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// TestSilentStrangerCutAtHandshakeTimeout: a stranger that connects to the
// data listener and never speaks is closed at HandshakeTimeout, not held
// until OpTimeout (30 s by default, 10 s now for a handshake).
func TestSilentStrangerCutAtHandshakeTimeout(t *testing.T) {
	w := newWorld(t, 1, 4096, func(c *Config) {
		c.Authenticate = jobToken
		c.OpTimeout = time.Hour
		c.HandshakeTimeout = 50 * time.Millisecond
	})
	c, err := net.Dial("tcp", w.nodes[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang's bound, not a timing
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a silent stranger's connection was left open")
	}
}

// TestHandshakeTimeoutDefault: 10 s, or OpTimeout when shorter; a
// negative one is refused.
func TestHandshakeTimeoutDefault(t *testing.T) {
	for _, tc := range []struct{ op, want time.Duration }{{0, 10 * time.Second}, {3 * time.Second, 3 * time.Second}, {time.Minute, 10 * time.Second}} {
		c := Config{Rank: 0, NPEs: 1, Heap: make([]byte, 64), Bell: transport.NewLocalBell(), OpTimeout: tc.op}
		cfg, err := c.withDefaults()
		if err != nil || cfg.HandshakeTimeout != tc.want {
			t.Errorf("OpTimeout %v: HandshakeTimeout %v (%v), want %v", tc.op, cfg.HandshakeTimeout, err, tc.want)
		}
	}
	c := Config{Rank: 0, NPEs: 1, Heap: make([]byte, 64), Bell: transport.NewLocalBell(), HandshakeTimeout: -1}
	if _, err := c.withDefaults(); err == nil {
		t.Error("a negative HandshakeTimeout was accepted")
	}
}

// A stranger holding hundreds of idle connections open, none of which ever
// authenticates, neither stops the node serving its peers nor keeps more
// than the acceptor's bound of them: a PE of the job still connects, puts
// and quiets, and every stranger's socket beyond the bound is closed.
func TestIdleStrangersDoNotStarveThePeers(t *testing.T) {
	const strangers = 300
	w := newWorld(t, 2, 4096, func(c *Config) { c.Authenticate = jobToken })
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range strangers {
		c, err := net.Dial("tcp", w.nodes[1].Addr())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	p := w.path(0, 1)
	if err := p.Put(64, []byte("served")); err != nil {
		t.Fatal(err)
	}
	if err := w.nodes[0].Engine().Quiet(); err != nil {
		t.Fatal(err)
	}
	if got := string(w.heaps[1][64:70]); got != "served" {
		t.Fatalf("heap holds %q", got)
	}
	// Every stranger beyond the bound is told admit.Busy (the listener
	// had not written to it) and then reads EOF: count the closed ones.
	closed := 0
	for _, c := range idle[:strangers-w.nodes[1].acc.Pending()] {
		if b, err := io.ReadAll(c); err == nil && admit.IsBusy(b) {
			closed++
		}
	}
	if pending := w.nodes[1].acc.Pending(); pending > 256 || closed+pending < strangers {
		t.Fatalf("%d strangers pending, %d closed, of %d", pending, closed, strangers)
	}
}
