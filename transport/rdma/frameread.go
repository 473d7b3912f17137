package rdma

import (
	"bufio"
	"io"
	"net"

	"github.com/goshmem/shmem/internal/sealed"
)

// frameSource is what a connection's frames are read from: a sealed
// connection, which keeps its opened plaintext in a buffer of its own and
// serves it in place, or else a bufio.Reader over the connection.
//
// Why not a bufio.Reader over a sealed connection too: its fill copied
// every opened record once more, and its Peek, Discard and fill on top of
// the record's own cost about 400 instructions per 8-byte TLS round trip
// (callgrind). A struct that branches, not an interface: the calls stay
// direct and inline (an interface over bufio's promoted methods cost
// about 50 instructions per plain round trip).
type frameSource struct {
	sealed *sealed.Conn  // set under sealed records
	br     *bufio.Reader // set otherwise
}

// newFrameSource returns c's frame source: c itself when sealed.
func newFrameSource(c net.Conn) frameSource {
	if sc, ok := c.(*sealed.Conn); ok {
		return frameSource{sealed: sc}
	}
	return frameSource{br: bufio.NewReaderSize(c, 64<<10)}
}

// peek returns the next n bytes (n <= headerSize), unconsumed; they stay
// valid until the next call.
func (f *frameSource) peek(n int) ([]byte, error) {
	if f.sealed != nil {
		return f.sealed.Peek(n)
	}
	return f.br.Peek(n)
}

// discard consumes n bytes that peek returned.
func (f *frameSource) discard(n int) {
	if f.sealed != nil {
		f.sealed.Discard(n)
	} else {
		f.br.Discard(n)
	}
}

// buffered is above 0 while more input is already here (in a sealed
// connection: opened or not).
func (f *frameSource) buffered() int {
	if f.sealed != nil {
		return f.sealed.Buffered()
	}
	return f.br.Buffered()
}

// readFull fills dst, as io.ReadFull. A payload already in bufio's buffer
// is copied straight out of it (the common small get).
func (f *frameSource) readFull(dst []byte) error {
	if f.sealed != nil {
		return f.sealed.ReadFull(dst)
	}
	if len(dst) <= f.br.Buffered() {
		p, _ := f.br.Peek(len(dst))
		copy(dst, p)
		f.br.Discard(len(dst))
		return nil
	}
	_, err := io.ReadFull(f.br, dst)
	return err
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
