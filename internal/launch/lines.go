package launch

import (
	"bytes"
	"io"
	"sync"
)

// maxLine bounds the bytes a lineWriter holds for one unfinished line; a
// longer line is emitted in pieces of this size so a PE that never writes
// a newline cannot exhaust the launcher's memory.
const maxLine = 64 << 10

// sink is an output shared by every PE's lineWriters: mu, one per job,
// makes each emitted line one uninterrupted Write even when Stdout and
// Stderr are the same writer.
type sink struct {
	mu *sync.Mutex
	w  io.Writer
}

func (s sink) emit(line []byte) {
	if s.w == nil {
		return
	}
	s.mu.Lock()
	_, _ = s.w.Write(line)
	s.mu.Unlock()
}

// lineWriter is the io.Writer given to one PE stream: it hands every
// complete line (with its newline) to emit, holding back a partial line
// until its newline arrives or Close flushes it with a newline added.
type lineWriter struct {
	emit func(line []byte)
	mu   sync.Mutex // exec writes from its copy goroutine; Close from Wait's
	buf  []byte     // the unfinished line
}

func (p *lineWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			room := maxLine - len(p.buf)
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
		p.emit(p.buf)
		p.buf = p.buf[:0]
	}
	return n, nil
}

// flushLocked emits the held partial line with a newline added.
func (p *lineWriter) flushLocked() {
	if len(p.buf) == 0 {
		return
	}
	p.emit(append(p.buf, '\n'))
	p.buf = p.buf[:0]
}

// Close emits a last line that had no newline.
func (p *lineWriter) Close() error {
	p.mu.Lock()
	p.flushLocked()
	p.mu.Unlock()
	return nil
}

// streamWriter returns the writer for one of PE rank's streams, or nil
// when nothing wants its lines (the stream then goes to /dev/null).
func (j *Job) streamWriter(p *Proc, out io.Writer) *lineWriter {
	c := &j.cfg
	if out == nil && !c.Capture && c.OnLine == nil {
		return nil
	}
	var prefix []byte
	if c.Prefix != nil {
		prefix = []byte(c.Prefix(p.rank))
	}
	s := sink{mu: &j.outMu, w: out}
	var pl []byte // prefix + line, reused: emit runs under the lineWriter's lock
	return &lineWriter{emit: func(line []byte) {
		if s.w != nil {
			pl = append(append(pl[:0], prefix...), line...)
			s.emit(pl)
		}
		if c.Capture {
			p.mu.Lock()
			p.out.Write(line)
			p.mu.Unlock()
		}
		if c.OnLine != nil {
			c.OnLine(p.rank, string(bytes.TrimSuffix(line, []byte{'\n'})))
		}
	}}
}
