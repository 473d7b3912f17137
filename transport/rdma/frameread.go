package rdma

import (
	"io"
	"net"

	"github.com/goshmem/shmem/internal/sealed"
)

// frameSource is what a connection's frames are read from: a sealed
// connection, which keeps its opened plaintext in a buffer of its own and
// serves it in place, or else a plainReader over the connection.
//
// Why not a bufio.Reader over a sealed connection too: its fill copied
// every opened record once more, and its Peek, Discard and fill on top of
// the record's own cost about 400 instructions per 8-byte TLS round trip
// (callgrind). A struct that branches, not an interface: the calls stay
// direct and inline (an interface over bufio's promoted methods cost
// about 50 instructions per plain round trip).
type frameSource struct {
	sealed *sealed.Conn // set under sealed records
	plain  *plainReader // set otherwise
}

// newFrameSource returns c's frame source: c itself when sealed.
func newFrameSource(c net.Conn) frameSource {
	if sc, ok := c.(*sealed.Conn); ok {
		return frameSource{sealed: sc}
	}
	return frameSource{plain: &plainReader{c: c, buf: make([]byte, plainBuffer)}}
}

// peek returns the next n bytes (n <= headerSize), unconsumed; they stay
// valid until the next call.
func (f *frameSource) peek(n int) ([]byte, error) {
	if f.sealed != nil {
		return f.sealed.Peek(n)
	}
	return f.plain.peek(n)
}

// discard consumes n bytes that peek returned.
func (f *frameSource) discard(n int) {
	if f.sealed != nil {
		f.sealed.Discard(n)
	} else {
		f.plain.r += n
	}
}

// buffered is above 0 while more input is already here (in a sealed
// connection: opened or not).
func (f *frameSource) buffered() int {
	if f.sealed != nil {
		return f.sealed.Buffered()
	}
	return f.plain.w - f.plain.r
}

// readFull fills dst, as io.ReadFull, except that a stream ending inside
// dst is io.ErrUnexpectedEOF even when dst got no byte (dst follows a
// header).
func (f *frameSource) readFull(dst []byte) error {
	if f.sealed != nil {
		return f.sealed.ReadFull(dst)
	}
	return f.plain.readFull(dst)
}

// plainBuffer is a plain connection's read buffer: frames and the small
// payloads after them are read from it in place; a payload longer than
// it is read straight into its destination.
const plainBuffer = 64 << 10

// plainReader is the read buffer of a connection without sealed records:
// bufio.Reader's Peek, Discard and fill cut down to what frames need (they
// cost about 200 instructions per frame in bufio, callgrind; here the
// common peek and discard are a comparison and an add). A read error is
// final: it is returned from then on, once the bytes before it are used.
type plainReader struct {
	c    net.Conn
	buf  []byte
	r, w int // buf[r:w] is read and not yet consumed
	err  error
}

// peek returns the next n bytes (n <= len(buf)) unconsumed.
func (p *plainReader) peek(n int) ([]byte, error) {
	if p.w-p.r < n {
		if err := p.fill(n); err != nil {
			return nil, err
		}
	}
	return p.buf[p.r : p.r+n], nil
}

// fill reads until n bytes (n <= len(buf)) are buffered or the
// connection fails.
func (p *plainReader) fill(n int) error {
	if p.r == p.w {
		p.r, p.w = 0, 0
	} else if p.r+n > len(p.buf) {
		p.w = copy(p.buf, p.buf[p.r:p.w])
		p.r = 0
	}
	for empty := 0; p.w-p.r < n; {
		if p.err != nil {
			return p.err
		}
		k, err := p.c.Read(p.buf[p.w:])
		p.w += k
		switch {
		case err != nil:
			p.err = err
		case k == 0:
			if empty++; empty == 100 { // as bufio: a connection that never delivers
				p.err = io.ErrNoProgress
			}
		}
	}
	return nil
}

// readFull fills dst from the buffer and, past it, from the connection:
// straight into dst when the rest is at least a buffer long.
func (p *plainReader) readFull(dst []byte) error {
	k := p.take(dst)
	if k == len(dst) {
		return nil
	}
	rest := dst[k:]
	var err error
	switch {
	case len(rest) < len(p.buf):
		if err = p.fill(len(rest)); err == nil {
			p.take(rest)
		}
	case p.err != nil:
		err = p.err
	default:
		if _, err = io.ReadFull(p.c, rest); err != nil {
			p.err = err
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// take copies buffered bytes into dst, as many as fit, and consumes them.
func (p *plainReader) take(dst []byte) int {
	k := copy(dst, p.buf[p.r:p.w])
	p.r += k
	return k
}

// readHeader decodes and checks the next frame header where it lies in
// src's buffer, into h, and consumes it. Why not io.ReadFull into a header
// buffer and decode that: the copy and ReadFull's loop cost about 200
// instructions per frame. A frame error is returned wrapped in
// frameError, so the caller can tell a hostile peer from a lost one.
func readHeader(src *frameSource, h *header) error {
	b, err := src.peek(headerSize)
	if err != nil {
		if err == io.EOF && src.buffered() > 0 {
			err = io.ErrUnexpectedEOF // cut inside a header
		}
		return err
	}
	err = h.decode(b)
	src.discard(headerSize) // cannot fail: the bytes are buffered
	if err != nil {
		return frameError{err}
	}
	return nil
}

// frameError is a frame that failed decodeHeader's checks.
type frameError struct{ err error }

func (e frameError) Error() string { return e.err.Error() }
func (e frameError) Unwrap() error { return e.err }
