package main

import (
	"bytes"
	"io"
	"sync"
)

// maxLine bounds the bytes a prefixer holds for one unfinished line; a
// longer line is emitted in pieces of this size so a child that never
// writes a newline cannot exhaust memory.
const maxLine = 64 << 10

// sink is an output shared by every PE's prefixer: mu makes each emitted
// line one uninterrupted Write.
type sink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *sink) emit(line []byte) {
	s.mu.Lock()
	_, _ = s.w.Write(line)
	s.mu.Unlock()
}

// Write emits b whole, so shmemrun's own messages never split a PE's line.
func (s *sink) Write(b []byte) (int, error) {
	s.emit(b)
	return len(b), nil
}

// prefixer is the io.Writer given to one child stream: it emits every
// complete line to the sink with its prefix, holding back a partial line
// until its newline arrives or Close flushes it.
type prefixer struct {
	prefix []byte
	out    *sink
	mu     sync.Mutex // exec may write from its copy goroutine; Close from ours
	buf    []byte     // prefix followed by the unfinished line
}

func newPrefixer(prefix string, out *sink) *prefixer {
	return &prefixer{prefix: []byte(prefix), out: out, buf: []byte(prefix)}
}

func (p *prefixer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			room := len(p.prefix) + maxLine - len(p.buf)
			if len(b) < room {
				p.buf = append(p.buf, b...)
				return n, nil
			}
			p.buf = append(p.buf, b[:room]...)
			b = b[room:]
			p.flushLocked()
			continue
		}
		p.buf = append(p.buf, b[:i+1]...)
		b = b[i+1:]
		p.out.emit(p.buf)
		p.buf = append(p.buf[:0], p.prefix...)
	}
	return n, nil
}

// flushLocked emits the held partial line with a newline added.
func (p *prefixer) flushLocked() {
	if len(p.buf) == len(p.prefix) {
		return
	}
	p.out.emit(append(p.buf, '\n'))
	p.buf = append(p.buf[:0], p.prefix...)
}

// Close emits a last line that had no newline.
func (p *prefixer) Close() error {
	p.mu.Lock()
	p.flushLocked()
	p.mu.Unlock()
	return nil
}
