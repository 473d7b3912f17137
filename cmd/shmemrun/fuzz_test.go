package main

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzPrefixer feeds a child's output in two writes split anywhere and
// checks that every line comes out once, whole, with the prefix.
func FuzzPrefixer(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), 3)
	f.Add([]byte("no newline"), 0)
	f.Add([]byte("\n\n\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		if cut < 0 || cut > len(in) {
			cut = len(in) / 2
		}
		var out bytes.Buffer
		p := newPrefixer("[PE 7] ", &sink{w: &out})
		p.Write(in[:cut])
		p.Write(in[cut:])
		p.Close()
		var want bytes.Buffer
		lines := strings.SplitAfter(string(in), "\n")
		for _, l := range lines {
			if l == "" {
				continue
			}
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
