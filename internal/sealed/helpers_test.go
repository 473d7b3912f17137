package sealed

import (
	"bytes"
	"net"
	"testing"
)

// pipeConn is a net.Conn over a buffer: writes append, reads consume.
type pipeConn struct {
	net.Conn
	b *bytes.Buffer
}

func (p pipeConn) Read(b []byte) (int, error)  { return p.b.Read(b) }
func (p pipeConn) Write(b []byte) (int, error) { return p.b.Write(b) }

var (
	secretA = bytes.Repeat([]byte{0xa5}, secretLen)
	secretB = bytes.Repeat([]byte{0x5a}, secretLen)
)

// pair returns a sender whose records go into wire, and a receiver that
// reads from rx (which a test may fill with wire's bytes, altered).
func pair(t testing.TB, wire, rx *bytes.Buffer) (send, recv *Conn) {
	t.Helper()
	send, err := newConn(pipeConn{b: wire}, secretA, secretB, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	recv, err = newConn(pipeConn{b: rx}, secretB, secretA, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	return send, recv
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}
