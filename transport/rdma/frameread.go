package rdma

import (
	"bufio"
	"io"
)

// readHeader decodes and checks the next frame header where it lies in
// br's buffer, into h, and consumes it. Why not io.ReadFull into a header
// buffer and decode that: the copy and ReadFull's loop cost about 200
// instructions per frame. A frame error is returned wrapped in
// frameError, so the caller can tell a hostile peer from a lost one.
func readHeader(br *bufio.Reader, h *header) error {
	b, err := br.Peek(headerSize)
	if err != nil {
		if err == io.EOF && len(b) > 0 {
			err = io.ErrUnexpectedEOF // cut inside a header
		}
		return err
	}
	err = h.decode(b)
	br.Discard(headerSize) // cannot fail: the bytes are buffered
	if err != nil {
		return frameError{err}
	}
	return nil
}

// frameError is a frame that failed decodeHeader's checks.
type frameError struct{ err error }

func (e frameError) Error() string { return e.err.Error() }
func (e frameError) Unwrap() error { return e.err }

// readInto fills dst from br: a payload already buffered is copied out
// of br's buffer directly (the common small get), a longer one read like
// io.ReadFull.
func readInto(br *bufio.Reader, dst []byte) error {
	if len(dst) <= br.Buffered() {
		b, _ := br.Peek(len(dst))
		copy(dst, b)
		br.Discard(len(dst))
		return nil
	}
	_, err := io.ReadFull(br, dst)
	return err
}
