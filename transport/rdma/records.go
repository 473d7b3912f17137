package rdma

import (
	"bufio"
	"net"
	"sync"
)

// recordConn sits between crypto/tls and the socket of a TLS connection.
//
// Why: crypto/tls reads a record at a time and writes each record (at
// most 16 KiB) with its own write(2), so a 256 KiB frame cost 16 writes and
// as many reads. Profiled at 1 MiB puts, TLS ran at a third of plain TCP
// with AES-GCM at 3% of the CPU and system calls at 60%. Reads here come
// from a buffer refilled by large reads, and writes made while the owner
// holds the connection are gathered and leave in one write at release.
//
// Writes outside a hold go straight through; the TLS handshake must run
// (explicitly, as lanes and server connections do) before the first hold,
// or its messages would wait for a release that waits for the handshake.
// hold and release are called under the connection's write lock; Read by
// the connection's one reader.
type recordConn struct {
	net.Conn
	br *bufio.Reader

	// mu guards held and wbuf: crypto/tls may also write from the reading
	// goroutine (a KeyUpdate a peer asks for), while a writer holds.
	mu   sync.Mutex
	held bool
	wbuf []byte
}

// recordReadBuffer is how much one read may fetch: several full records.
const recordReadBuffer = 256 << 10

func newRecordConn(c net.Conn) *recordConn {
	return &recordConn{Conn: c, br: bufio.NewReaderSize(c, recordReadBuffer)}
}

// Read serves crypto/tls's small reads from the buffer.
func (r *recordConn) Read(p []byte) (int, error) { return r.br.Read(p) }

// Write gathers p while held, else writes it.
func (r *recordConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	if !r.held {
		r.mu.Unlock()
		return r.Conn.Write(p)
	}
	r.wbuf = append(r.wbuf, p...)
	r.mu.Unlock()
	return len(p), nil
}

// hold starts gathering writes.
func (r *recordConn) hold() {
	r.mu.Lock()
	r.held = true
	r.mu.Unlock()
}

// release writes what was gathered in one write and stops gathering; err
// is an earlier error of the caller's, returned in preference.
func (r *recordConn) release(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held = false
	if len(r.wbuf) > 0 {
		_, werr := r.Conn.Write(r.wbuf)
		if err == nil {
			err = werr
		}
		r.wbuf = r.wbuf[:0]
	}
	return err
}
