package sealed

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// MaxRecord is the largest plaintext of one record. 64 KiB: the record
// being opened stays in the core's L2 cache until its plaintext is copied
// out, and the receiver can open a chunk's first records while the rest
// are still arriving. (16, 32, 128 and 256 KiB measured the same within
// the noise; see bench/NOTES.md.)
const MaxRecord = 64 << 10

const (
	hdrLen   = 4
	tagLen   = 16
	overhead = hdrLen + tagLen
	maxWire  = MaxRecord + overhead // the longest record on the wire
)

// The read buffer starts at two records (128 KiB), enough for the small
// frames of a small lane, and grows once to bulkBuffer, four records (256
// KiB), at the first full record: bulk traffic. With four a read may fetch
// up to three records while every record keeps room to complete where it
// starts (see fill): 1 MiB puts measured 11.3 reads per MiB with four, 14.5
// with three, and 12 with the old two-record buffer, which moved records
// (strace, parked reads). The growth is bounded, once per connection, and
// a hostile length can cause no more.
const (
	smallBuffer = 2 * maxWire
	bulkBuffer  = 4 * maxWire
)

// FlushAt is how many sealed bytes a held Conn gathers before it writes
// them mid-frame: 256 KiB, a default chunk. Writing each 64 KiB record as
// it was sealed (to let the receiver start sooner) measured 30% slower
// at 1 MiB: on loopback every write costs the sender the receiver's
// share of TCP processing and a wake-up, and 64 KiB writes also split
// into a full segment and a 100-byte one.
const FlushAt = 256 << 10

var (
	// ErrAuth: a record failed authentication (forged, altered, replayed,
	// reordered or reflected).
	ErrAuth = errors.New("sealed: record failed authentication")
	// ErrRecord: a record's length is outside 1..MaxRecord.
	ErrRecord = errors.New("sealed: record length out of range")
)

// Conn is a net.Conn whose bytes travel in sealed records over the socket
// under a TLS connection. One goroutine may read while another writes;
// neither side is safe for concurrent use by several. Deadlines, addresses
// and Close are the socket's.
type Conn struct {
	net.Conn // the socket the TLS connection ran on

	// write side
	w     direction
	out   []byte // sealed records not yet written
	held  bool
	werr  error
	nonce [12]byte

	// read side
	r     direction
	in    []byte // in[rd:wr]: bytes read, not yet opened
	rd    int
	wr    int
	plain []byte // opened plaintext not yet returned (inside in)
	pend  []byte // plaintext gathered by Peek across records, returned before plain (inside head)
	head  [PeekMax]byte
	rerr  error
	rnon  [12]byte
	moved int // bytes fill moved to the buffer's start (tests: none in a stream of frames)
}

// markerText is what Exchange sends and expects through TLS.
const markerText = "GSHMSEAL1"

// Exchange sends the switch marker through tc and reads the peer's: every
// TLS record the peer sent before it (session tickets, its Authenticate
// messages) is then consumed. tc's reads must come from a reader that
// never fetches past the TLS record crypto/tls asked for, so that the
// bytes after the marker are still the caller's to hand to New.
func Exchange(tc *tls.Conn) error {
	if _, err := io.WriteString(tc, markerText); err != nil {
		return fmt.Errorf("sealed: sending the switch marker: %w", err)
	}
	var got [len(markerText)]byte
	if _, err := io.ReadFull(tc, got[:]); err != nil {
		return fmt.Errorf("sealed: reading the switch marker: %w", err)
	}
	if string(got[:]) != markerText {
		return errors.New("sealed: peer sent no switch marker (another wire version?)")
	}
	return nil
}

// New returns the sealed connection over sock for the TLS session cs
// (Supported must hold); client says which end this is, and pending holds
// the bytes already read from sock past the peer's switch marker (copied).
func New(sock net.Conn, cs *tls.ConnectionState, client bool, pending []byte) (*Conn, error) {
	c2s, s2c, err := secrets(cs)
	if err != nil {
		return nil, fmt.Errorf("sealed: exporting keys: %w", err)
	}
	send, recv := c2s, s2c
	if !client {
		send, recv = s2c, c2s
	}
	return newConn(sock, send, recv, keyLen(cs.CipherSuite), pending)
}

func newConn(sock net.Conn, send, recv []byte, keyLen int, pending []byte) (*Conn, error) {
	c := &Conn{Conn: sock}
	if err := c.w.init(send, keyLen); err != nil {
		return nil, err
	}
	if err := c.r.init(recv, keyLen); err != nil {
		return nil, err
	}
	c.out = make([]byte, 0, FlushAt+MaxRecord+2*overhead)
	c.in = make([]byte, max(smallBuffer, len(pending)+maxWire))
	c.wr = copy(c.in, pending)
	return c, nil
}

// Write seals p in records of at most MaxRecord bytes and writes them; while
// held, records wait for Release or until FlushAt bytes are sealed. A
// failed write is final.
func (c *Conn) Write(p []byte) (int, error) {
	if c.werr != nil {
		return 0, c.werr
	}
	if len(p) <= MaxRecord && len(p) > 0 && !c.held { // one record, written at once: the common frame
		if err := c.seal(p); err != nil {
			return 0, err
		}
		if err := c.flush(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	n := 0
	for len(p) > 0 {
		k := min(len(p), MaxRecord)
		if err := c.seal(p[:k]); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
		if len(c.out) >= FlushAt {
			if err := c.flush(); err != nil {
				return n, err
			}
		}
	}
	if !c.held {
		if err := c.flush(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// seal appends p's record to out.
func (c *Conn) seal(p []byte) error {
	c.w.nonce(&c.nonce)
	o := len(c.out)
	c.out = binary.LittleEndian.AppendUint32(c.out, uint32(len(p)))
	c.out = c.w.aead.Seal(c.out, c.nonce[:], p, c.out[o:o+hdrLen])
	if err := c.w.advance(); err != nil {
		c.werr = err
		return err
	}
	return nil
}

func (c *Conn) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.out)
	c.out = c.out[:0]
	if err != nil {
		c.werr = err
	}
	return err
}

// Hold makes Writes gather their records until Release writes them (or
// FlushAt bytes of them are waiting).
func (c *Conn) Hold() { c.held = true }

// Release writes what Hold gathered and stops gathering; err, an earlier
// error of the caller's, is returned in preference to the write's.
func (c *Conn) Release(err error) error {
	c.held = false
	if ferr := c.flush(); err == nil {
		err = ferr
	}
	return err
}

// Read returns plaintext of authenticated records only.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(c.pend) > 0 { // left by a Peek across records
		n := copy(p, c.pend)
		c.pend = c.pend[n:]
		return n, nil
	}
	if len(c.plain) == 0 {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.plain)
	c.plain = c.plain[n:]
	return n, nil
}

// Buffered is how many bytes have been read from the socket and not yet
// returned (opened plaintext and records not yet opened): while it is
// above zero, more input is already here.
func (c *Conn) Buffered() int { return len(c.pend) + len(c.plain) + c.wr - c.rd }

// next reads and opens one record in place; any failure is final.
func (c *Conn) next() error {
	if c.rerr != nil {
		return c.rerr
	}
	if c.rd == c.wr { // nothing buffered: the next read gets the whole buffer
		c.rd, c.wr = 0, 0
	}
	if c.wr-c.rd < hdrLen { // fill's own first test, without the call when a record is here
		if err := c.fill(hdrLen); err != nil {
			return c.failRead(err, true)
		}
	}
	n := int(binary.LittleEndian.Uint32(c.in[c.rd:]))
	if n < 1 || n > MaxRecord {
		return c.failRead(fmt.Errorf("%w: %d bytes", ErrRecord, n), false)
	}
	if n == MaxRecord && len(c.in) < bulkBuffer {
		c.grow()
	}
	if c.wr-c.rd < hdrLen+n+tagLen {
		if err := c.fill(hdrLen + n + tagLen); err != nil {
			return c.failRead(err, false)
		}
	}
	rec := c.in[c.rd : c.rd+hdrLen+n+tagLen]
	c.r.nonce(&c.rnon)
	// Opened in place, inside c.in: nothing reaches a caller's memory
	// before the tag has checked.
	pt, err := c.r.aead.Open(rec[hdrLen:hdrLen], c.rnon[:], rec[hdrLen:], rec[:hdrLen])
	if err != nil {
		return c.failRead(ErrAuth, false)
	}
	if err := c.r.advance(); err != nil {
		return c.failRead(err, false)
	}
	c.rd += len(rec)
	c.plain = pt
	return nil
}

// grow moves the unread bytes into a read buffer of bulkBuffer bytes; the
// unread plaintext is empty.
func (c *Conn) grow() {
	in := make([]byte, bulkBuffer)
	c.wr = copy(in, c.in[c.rd:c.wr])
	c.rd = 0
	c.in = in
}

// failRead makes err final; an end of stream at a record boundary
// (atBoundary and nothing buffered) stays io.EOF, inside one it becomes
// io.ErrUnexpectedEOF.
func (c *Conn) failRead(err error, atBoundary bool) error {
	if errors.Is(err, io.EOF) && !(atBoundary && c.wr == c.rd) {
		err = io.ErrUnexpectedEOF
	}
	c.rerr = err
	return err
}

// fill reads until in[rd:] holds n bytes (n <= maxWire, the bytes of the
// record starting at rd); the unread plaintext is empty, so the bytes
// before rd may be overwritten.
//
// Reads stop at len(in)-maxWire, or at rd+n if that is further: so every
// record that starts in the buffer starts there with room for a whole
// record after it, or is the first of an empty buffer (next starts it at
// 0). A record cut by the buffer's end would have to move to its start
// before opening: reads up to the end moved about a quarter of the bytes
// of 1 MiB puts a second time (callgrind: memmove under fill), since a
// frame's header record shifts the records after it. The move stays for
// what the rule cannot cover (bytes handed to New).
func (c *Conn) fill(n int) error {
	if c.wr-c.rd >= n {
		return nil
	}
	if c.rd+n > len(c.in) {
		c.wr = copy(c.in, c.in[c.rd:c.wr])
		c.moved += c.wr
		c.rd = 0
	}
	lim := max(c.rd+n, len(c.in)-maxWire)
	for c.wr-c.rd < n {
		k, err := c.Conn.Read(c.in[c.wr:lim])
		c.wr += k
		if err != nil && c.wr-c.rd < n {
			return err
		}
	}
	return nil
}
