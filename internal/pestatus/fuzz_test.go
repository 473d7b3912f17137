package pestatus

import (
	"bytes"
	"strings"
	"testing"
)

// countingReader counts the bytes Scan takes from it.
type countingReader struct {
	r *bytes.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// FuzzScan feeds a PE's status socket arbitrary bytes, as the launcher
// gets them from a user's process. Scan must not panic, must read no
// more than its bounds allow (16 lines of 64 bytes, with one buffer
// fill's slack), must only report a failed PE of the job other than the
// PE itself, and must report a GlobalExit's status as the line said it.
func FuzzScan(f *testing.F) {
	f.Add([]byte("finalized\n"), 1, 4)
	f.Add([]byte("peer-failed 2\nglobal-exit -3\nfinalized\n"), 0, 3)
	f.Add([]byte("peer-finalized-early 1\npeer-failed 2\n"), 0, 3)
	f.Add([]byte("peer-failed 0\npeer-failed 9\npeer-failed -1\n"), 0, 3)
	f.Add([]byte("global-exit 99999999999\nglobal-exit 7\n"), 2, 3)
	f.Add([]byte(strings.Repeat("x", 200)+"\nfinalized\n"), 0, 2)
	f.Add([]byte(strings.Repeat("finalized\n", 40)), 0, 2)
	f.Add([]byte("finalized"), 0, 1)
	f.Fuzz(func(t *testing.T, data []byte, self, npes int) {
		if npes < 1 || npes > 1<<16 || self < 0 || self >= npes {
			return
		}
		cr := &countingReader{r: bytes.NewReader(data)}
		var seen int
		rep := Scan(cr, self, npes, func(Report) { seen++ })
		if seen > maxLines {
			t.Fatalf("%d reports from at most %d lines", seen, maxLines)
		}
		if cr.n > (maxLines+1)*maxLine+4096 {
			t.Fatalf("Scan read %d bytes, past its bounds", cr.n)
		}
		if rep.PeerFailed && (rep.FailedPE < 0 || rep.FailedPE >= npes || rep.FailedPE == self) {
			t.Fatalf("reported PE %d failed, of %d PEs, on PE %d", rep.FailedPE, npes, self)
		}
		if !rep.PeerFailed && (rep.FailedPE != 0 || rep.FinalizedEarly) {
			t.Fatalf("no failed PE, yet %+v", rep)
		}
		if !rep.GlobalExit && rep.ExitStatus != 0 {
			t.Fatalf("no GlobalExit, yet status %d", rep.ExitStatus)
		}
	})
}
