package rdma

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"

	"github.com/goshmem/shmem/internal/sealed"
)

// gatherer is a connection whose writes a frame's writer gathers into as
// few socket writes as it can: Hold before the frame's writes, Release
// after them (with the writer's own error, returned in preference).
type gatherer interface {
	Hold()
	Release(err error) error
}

// recordConn sits between crypto/tls and the socket of a TLS connection.
//
// Why: crypto/tls reads a record at a time and writes each record (at
// most 16 KiB) with its own write(2), so a 256 KiB frame cost 16 writes and
// as many reads. Profiled at 1 MiB puts, TLS ran at a third of plain TCP
// with AES-GCM at 3% of the CPU and system calls at 60%. Reads here come
// from a buffer refilled by large reads, and writes made while the owner
// holds the connection are gathered and leave in one write at release.
//
// Reads never return bytes past the end of the TLS record they started
// in, so crypto/tls never buffers more than the record it asked for: the
// bytes after a record are still here (pending) when the connection
// switches to sealed records (see sealTLS).
//
// Writes outside a hold go straight through; the TLS handshake must run
// (explicitly, as lanes and server connections do) before the first hold,
// or its messages would wait for a release that waits for the handshake.
// Hold and Release are called under the connection's write lock; Read by
// the connection's one reader.
type recordConn struct {
	net.Conn
	br   *bufio.Reader
	src  io.Reader // what br reads from
	left int       // bytes of the current TLS record not yet returned by Read

	// mu guards held and wbuf: crypto/tls may also write from the reading
	// goroutine (a KeyUpdate a peer asks for), while a writer holds.
	mu   sync.Mutex
	held bool
	wbuf []byte
}

// recordReadBuffer is how much one read may fetch: several full records.
const recordReadBuffer = 256 << 10

// handshakeReadBuffer is the read buffer of a connection until its peer
// has authenticated: enough for the handshake's records, and small, since
// anyone may open such a connection (internal/admit bounds how many).
const handshakeReadBuffer = 4 << 10

// tlsHeaderLen is a TLS record header's length: type, version, length.
const tlsHeaderLen = 5

// newRecordConn returns a recordConn writing to c and reading from src
// (c itself, or a wrapper of it), with the small buffer of a connection
// whose peer has not authenticated yet; grow gives it the full one.
func newRecordConn(c net.Conn, src io.Reader) *recordConn {
	return &recordConn{Conn: c, src: src, br: bufio.NewReaderSize(src, handshakeReadBuffer)}
}

// grow gives r its full read buffer once the peer has authenticated,
// keeping the bytes the small one holds first. Strangers open connections
// at will, so the 256 KiB is not theirs to make a PE allocate.
func (r *recordConn) grow() {
	if r.br.Size() >= recordReadBuffer {
		return
	}
	src := r.src
	if held, _ := r.br.Peek(r.br.Buffered()); len(held) > 0 {
		src = io.MultiReader(bytes.NewReader(bytes.Clone(held)), r.src)
	}
	r.br = bufio.NewReaderSize(src, recordReadBuffer)
}

// NetConn returns the connection under r (secure.VerifiedHook looks
// through it).
func (r *recordConn) NetConn() net.Conn { return r.Conn }

// Read serves crypto/tls's reads from the buffer, up to the end of the
// current record.
func (r *recordConn) Read(p []byte) (int, error) {
	if r.left == 0 {
		h, err := r.br.Peek(tlsHeaderLen)
		if err != nil {
			if len(h) == 0 {
				return 0, err
			}
			// A cut header: hand crypto/tls what there is, then the error.
			return r.br.Read(p[:min(len(p), len(h))])
		}
		r.left = tlsHeaderLen + int(binary.BigEndian.Uint16(h[3:]))
	}
	n, err := r.br.Read(p[:min(len(p), r.left)])
	r.left -= n
	return n, err
}

// pending returns the bytes read from the socket that crypto/tls has not
// asked for; valid until the next Read. Only between records may they be
// handed to another reader.
func (r *recordConn) pending() ([]byte, error) {
	if r.left != 0 {
		return nil, errors.New("TLS record cut by the switch to sealed records")
	}
	b, _ := r.br.Peek(r.br.Buffered())
	return b, nil
}

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

// Hold starts gathering writes.
func (r *recordConn) Hold() {
	r.mu.Lock()
	r.held = true
	r.mu.Unlock()
}

// Release writes what was gathered in one write and stops gathering; err
// is an earlier error of the caller's, returned in preference.
func (r *recordConn) Release(err error) error {
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

// sealTLS moves a TLS connection whose handshake and authentication are
// done onto sealed records (package sealed: 64 KiB records keyed from the
// session, opened in a private buffer) when its session allows it (TLS
// 1.3 with AES-GCM; both ends decide alike), and returns the connection
// frames then use and its gatherer. Otherwise tc stays in use, gathered by
// rec. Nothing else may use tc afterwards: a sealed connection writes and
// reads the socket under it directly, and closing tc would write to it.
func sealTLS(tc *tls.Conn, rec *recordConn, client bool) (net.Conn, gatherer, error) {
	cs := tc.ConnectionState()
	if !sealed.Supported(&cs) {
		rec.grow()
		return tc, rec, nil
	}
	if err := sealed.Exchange(tc); err != nil {
		return nil, nil, err
	}
	pend, err := rec.pending()
	if err != nil {
		return nil, nil, err
	}
	sc, err := sealed.New(rec.Conn, &cs, client, pend)
	if err != nil {
		return nil, nil, fmt.Errorf("switching to sealed records: %w", err)
	}
	return sc, sc, nil
}

// tlsMaxPlaintext is the most plaintext crypto/tls puts in one record.
const tlsMaxPlaintext = 16 << 10

// oneWriteOf is the longest write that g's connection sends with one
// socket write without a hold: a sealed connection seals a write's
// records and writes them together; crypto/tls writes each 16 KiB record
// on its own.
func oneWriteOf(g gatherer) int {
	if _, ok := g.(*recordConn); ok {
		return tlsMaxPlaintext
	}
	return math.MaxInt
}
