package rdma

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/sealed"
	"github.com/goshmem/shmem/internal/secure"
)

// connsOf returns the frame connections of rank 0's lanes to rank 1 and of
// rank 1's accepted connections, once both lanes carried a frame.
func connsOf(t *testing.T, w *world) (lanes, accepted []net.Conn) {
	t.Helper()
	p := w.path(0, 1).(*path)
	for _, l := range p.lanes {
		l.mu.Lock()
		lanes = append(lanes, l.conn)
		l.mu.Unlock()
	}
	n := w.nodes[1]
	n.mu.Lock()
	for sc := range n.servers {
		accepted = append(accepted, sc.c)
	}
	n.mu.Unlock()
	return lanes, accepted
}

// useBothLanes puts and reads back a small and a bulk payload.
func useBothLanes(t *testing.T, w *world) {
	t.Helper()
	p := w.path(0, 1)
	for _, n := range []int{8, 300 << 10} {
		src := pattern(n, byte(n))
		if err := p.Put(0, src); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		if err := p.Get(got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, src) {
			t.Fatalf("%d bytes differ after put and get", n)
		}
	}
}

// TestTLS13SwitchesToSealedRecords: under the job's TLS 1.3 both ends of
// both lanes carry frames in sealed records, after the job-secret
// authentication ran over TLS.
func TestTLS13SwitchesToSealedRecords(t *testing.T) {
	srv, cli, err := secure.JobConfigs([]byte("a job secret long enough for the key"))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("a job secret long enough for the key")
	w := newWorld(t, 2, 1<<20, func(c *Config) {
		c.ServerTLS, c.ClientTLS = srv, cli
		c.Authenticate = func(conn net.Conn, server bool) error {
			return secure.Handshake(conn, secret, secure.ServiceData, server, time.Now().Add(30*time.Second))
		}
	})
	useBothLanes(t, w)
	lanes, accepted := connsOf(t, w)
	if len(accepted) != 2 {
		t.Fatalf("%d accepted connections, want 2", len(accepted))
	}
	for _, c := range append(lanes, accepted...) {
		if _, ok := c.(*sealed.Conn); !ok {
			t.Errorf("a frame connection is %T, want *sealed.Conn", c)
		}
	}
}

// TestTLS12KeepsTLSRecords: a session that cannot switch (TLS 1.2) keeps
// crypto/tls's records on both ends and still carries frames intact.
func TestTLS12KeepsTLSRecords(t *testing.T) {
	srv, cli := selfSigned(t)
	srv.MinVersion, srv.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	cli.MinVersion, cli.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	w := newWorld(t, 2, 1<<20, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli })
	useBothLanes(t, w)
	lanes, accepted := connsOf(t, w)
	for _, c := range append(lanes, accepted...) {
		if _, ok := c.(*tls.Conn); !ok {
			t.Errorf("a TLS 1.2 frame connection is %T, want *tls.Conn", c)
		}
	}
}

// captureConn is a net.Conn whose writes are kept, for records a test
// seals and then alters before they reach a socket.
type captureConn struct {
	net.Conn
	out bytes.Buffer
}

func (c *captureConn) Write(p []byte) (int, error) { return c.out.Write(p) }

// TestForgedSealedRecordNeverReachesTheHeap plays an authenticated peer
// (it completed TLS and the switch) whose put's payload record was
// altered on the way: the target closes the connection and its heap keeps
// every byte. The control run, unaltered, lands the put.
func TestForgedSealedRecordNeverReachesTheHeap(t *testing.T) {
	srv, cli := selfSigned(t)
	const heapSize = 4096
	for _, forge := range []bool{false, true} {
		w := newWorld(t, 2, heapSize, func(c *Config) { c.ServerTLS, c.ClientTLS = srv, cli })
		raw, err := net.Dial("tcp", w.nodes[1].Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		rec := newRecordConn(raw, raw)
		tc := tls.Client(rec, cli)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		conn, _, err := sealTLS(tc, rec, true)
		if err != nil {
			t.Fatal(err)
		}
		// The same keys and record numbers as conn's own sealer, writing
		// into a buffer, so that a record can be altered before it leaves.
		cs := tc.ConnectionState()
		capture := &captureConn{}
		sc, err := sealed.New(capture, &cs, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		payload := pattern(1000, 7)
		sc.Write(frame(header{op: opPut, src: 0, dst: 1, off: 512}, payload)[:headerSize])
		hdrRecord := capture.out.Len()
		sc.Write(payload)
		if forge {
			capture.out.Bytes()[hdrRecord+10] ^= 1 // inside the payload record's ciphertext
		} else {
			sc.Write(frame(header{op: opFlush, id: 1, src: 0, dst: 1}, nil))
		}
		if _, err := raw.Write(capture.out.Bytes()); err != nil {
			t.Fatal(err)
		}
		got := w.heaps[1][512 : 512+len(payload)]
		if !forge {
			// The flush's answer, written after the put was applied, is the
			// synchronisation (no sleep).
			var hb [headerSize]byte
			if _, err := io.ReadFull(conn, hb[:]); err != nil {
				t.Fatal(err)
			}
			if h, err := decodeHeader(hb[:]); err != nil || h.op != opFlushAck {
				t.Fatalf("answer to the flush: %+v, %v", h, err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatal("the unaltered put did not land (the control run proves the records valid)")
			}
			continue
		}
		// The target closes once it refuses the record.
		raw.(*net.TCPConn).CloseWrite()
		if _, err := io.Copy(io.Discard, raw); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("reading until the target closes: %v", err)
		}
		if !bytes.Equal(got, make([]byte, len(payload))) {
			t.Fatal("a forged record's plaintext reached the heap")
		}
	}
}
