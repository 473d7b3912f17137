package rdma

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/secure"
)

// readBufferOf is the read buffer of the recordConn under c, a TLS
// connection in its handshake, or -1 when there is none.
func readBufferOf(c net.Conn) int {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return -1
	}
	rec, ok := tc.NetConn().(*recordConn)
	if !ok {
		return -1
	}
	return rec.br.Size()
}

// TestUnauthenticatedConnectionHoldsASmallReadBuffer: an accepted TLS
// connection whose peer has not proved the job secret holds a read
// buffer of handshakeReadBuffer, not the 256 KiB a frame connection
// reads with, so that a stranger's idle connections (256 pending at a
// time, each replaced by the next) cost a PE little memory. A 2000-
// connection flood of a data listener grew a PE from 23 to 151 MB when
// every accepted connection allocated 256 KiB at once.
func TestUnauthenticatedConnectionHoldsASmallReadBuffer(t *testing.T) {
	secret := []byte("a job secret long enough for the key")
	srv, cli, err := secure.JobConfigs(secret)
	if err != nil {
		t.Fatal(err)
	}
	sizes := make(chan int, 16)
	w := newWorld(t, 2, 1<<20, func(c *Config) {
		c.ServerTLS, c.ClientTLS = srv, cli
		c.Authenticate = func(conn net.Conn, server bool) error {
			if server {
				sizes <- readBufferOf(conn)
			}
			return secure.Handshake(conn, secret, secure.ServiceData, server, time.Now().Add(30*time.Second))
		}
	})
	useBothLanes(t, w)
	for range 2 {
		if got := <-sizes; got < 0 || got > handshakeReadBuffer {
			t.Fatalf("an accepted connection reads with a %d-byte buffer before its peer authenticated, want at most %d", got, handshakeReadBuffer)
		}
	}
}

// TestTLS12FrameConnectionsReadWithTheFullBuffer: a session that keeps
// crypto/tls's records (TLS 1.2 here) gets the full read buffer once
// authenticated, with the bytes the small one held still first.
func TestTLS12FrameConnectionsReadWithTheFullBuffer(t *testing.T) {
	srv, cli := selfSigned(t)
	srv.MinVersion, srv.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	cli.MinVersion, cli.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	w := newWorld(t, 2, 1<<20, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli })
	useBothLanes(t, w)
	n := w.nodes[1]
	n.mu.Lock()
	defer n.mu.Unlock()
	for sc := range n.servers {
		rec, ok := sc.rec.(*recordConn)
		if !ok {
			t.Fatalf("a TLS 1.2 frame connection gathers with %T, want *recordConn", sc.rec)
		}
		if got := rec.br.Size(); got != recordReadBuffer {
			t.Errorf("a TLS 1.2 frame connection reads with a %d-byte buffer, want %d", got, recordReadBuffer)
		}
	}
}
