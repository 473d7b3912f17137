package launch

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// prefixed is a lineWriter that writes each line with prefix to s, as a
// job's stream writer does.
func prefixed(prefix string, s sink) *lineWriter {
	return &lineWriter{emit: func(line []byte) { s.emit(append([]byte(prefix), line...)) }}
}

func TestLines(t *testing.T) {
	var out bytes.Buffer
	s := sink{mu: new(sync.Mutex), w: &out}
	a, b := prefixed("[PE 0] ", s), prefixed("[PE 1] ", s)
	a.Write([]byte("hel"))
	b.Write([]byte("one\ntw"))
	a.Write([]byte("lo\nworld\n\npart"))
	b.Write([]byte("o\n"))
	a.Close()
	b.Close()
	want := "[PE 1] one\n[PE 0] hello\n[PE 0] world\n[PE 0] \n[PE 1] two\n[PE 0] part\n"
	if out.String() != want {
		t.Fatalf("got %q\nwant %q", out.String(), want)
	}
}

func TestLinesLong(t *testing.T) {
	var out bytes.Buffer
	p := prefixed("> ", sink{mu: new(sync.Mutex), w: &out})
	long := strings.Repeat("x", maxLine+10)
	p.Write([]byte(long))
	p.Close()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "> "+long[:maxLine] || lines[1] != "> "+long[maxLine:] {
		t.Fatalf("long line split into %d lines of lengths %d", len(lines), len(lines[0]))
	}
}

// TestLinesConcurrent checks that lines written from many goroutines
// arrive whole.
func TestLinesConcurrent(t *testing.T) {
	var out bytes.Buffer
	s := sink{mu: new(sync.Mutex), w: &out}
	var wg sync.WaitGroup
	for r := 0; r < 8; r++ {
		p := prefixed(RankPrefix(r), s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				p.Write([]byte("abc"))
				p.Write([]byte("def\n"))
			}
			p.Close()
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 8*200 {
		t.Fatalf("%d lines, want %d", len(lines), 8*200)
	}
	for _, l := range lines {
		if len(l) != len("[PE 0] abcdef") || !strings.HasSuffix(l, "] abcdef") {
			t.Fatalf("torn line %q", l)
		}
	}
}

// FuzzLines feeds a PE's output in two writes split anywhere and checks
// that every line comes out once, whole, with the prefix.
func FuzzLines(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), 3)
	f.Add([]byte("no newline"), 0)
	f.Add([]byte("\n\n\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		if cut < 0 || cut > len(in) {
			cut = len(in) / 2
		}
		var out bytes.Buffer
		p := prefixed("[PE 7] ", sink{mu: new(sync.Mutex), w: &out})
		p.Write(in[:cut])
		p.Write(in[cut:])
		p.Close()
		var want bytes.Buffer
		for _, l := range strings.SplitAfter(string(in), "\n") {
			for len(l) > 0 {
				n := min(len(l), maxLine)
				if strings.HasSuffix(l, "\n") && len(l) == maxLine+1 {
					n = len(l) // the newline fits the piece
				}
				piece := l[:n]
				l = l[n:]
				want.WriteString("[PE 7] " + piece)
				if !strings.HasSuffix(piece, "\n") {
					want.WriteByte('\n')
				}
			}
		}
		if !bytes.Equal(out.Bytes(), want.Bytes()) {
			t.Fatalf("input %q: got %q, want %q", in, out.Bytes(), want.Bytes())
		}
	})
}
