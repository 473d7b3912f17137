package rdma

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"math"
	"net"
	"testing"

	"github.com/goshmem/shmem/internal/sealed"
)

// countConn counts the writes that reach it.
type countConn struct {
	net.Conn
	writes int
	got    bytes.Buffer
}

func (c *countConn) Write(p []byte) (int, error) {
	c.writes++
	return c.got.Write(p)
}

func TestRecordConnGathersHeldWrites(t *testing.T) {
	c := &countConn{}
	r := newRecordConn(c, c)
	r.Write([]byte("handshake")) // not held: straight through
	if c.writes != 1 {
		t.Fatalf("an unheld write made %d writes, want 1", c.writes)
	}
	r.Hold()
	for _, p := range []string{"rec1", "rec2", "rec3"} {
		r.Write([]byte(p))
	}
	if c.writes != 1 {
		t.Fatalf("held writes reached the socket: %d writes", c.writes)
	}
	if err := r.Release(nil); err != nil {
		t.Fatal(err)
	}
	if c.writes != 2 || c.got.String() != "handshakerec1rec2rec3" {
		t.Fatalf("after release: %d writes carrying %q, want 2 carrying everything in order", c.writes, c.got.String())
	}
	if err := r.Release(nil); err != nil || c.writes != 2 {
		t.Fatalf("an empty release wrote: %d writes, %v", c.writes, err)
	}
	earlier := errors.New("earlier")
	r.Hold()
	r.Write([]byte("x"))
	if err := r.Release(earlier); err != earlier {
		t.Fatalf("release returned %v, want the caller's earlier error", err)
	}
}

// TestRecordConnUnderTLS: a TLS connection whose writes are gathered and
// whose reads are buffered carries a large frame intact.
func TestRecordConnUnderTLS(t *testing.T) {
	srv, cli := selfSigned(t)
	c, s := tcpPair(t)
	rc, rs := newRecordConn(c, c), newRecordConn(s, s)
	client := tls.Client(rc, cli)
	server := tls.Server(rs, srv)
	// Both ends handshake first, as lanes and server connections do: a
	// handshake's writes must not be held.
	hs := make(chan error, 1)
	go func() { hs <- server.Handshake() }()
	if err := client.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := <-hs; err != nil {
		t.Fatal(err)
	}
	want := pattern(1<<20+5, 9)
	errc := make(chan error, 1)
	go func() {
		rc.Hold()
		_, err := client.Write(want)
		errc <- rc.Release(err)
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(server, got); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the frame differs after TLS over recordConn")
	}
}

// TestOneWriteOf: a frame's single write is held only where the
// connection would otherwise split it into several socket writes:
// crypto/tls's records above 16 KiB; a sealed connection never.
func TestOneWriteOf(t *testing.T) {
	if got := oneWriteOf(newRecordConn(&countConn{}, nil)); got != tlsMaxPlaintext {
		t.Fatalf("crypto/tls: %d, want %d", got, tlsMaxPlaintext)
	}
	var sc *sealed.Conn
	if got := oneWriteOf(sc); got != math.MaxInt {
		t.Fatalf("sealed: %d, want no limit", got)
	}
}
