package pestatus

import (
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/bootstrap"
)

// Scan takes the three reports once each, hands each change to each, and
// ignores what is not goshmem's: unknown words, bad numbers, a peer that
// is not another PE of the job, repeats.
func TestScan(t *testing.T) {
	in := strings.Join([]string{
		"hello", "finalized extra", "peer-failed 1", "peer-failed 7", "peer-failed x",
		"peer-failed 2", "peer-failed 0", "global-exit", "global-exit 99999999999",
		"global-exit -3", "global-exit 4", "finalized", "finalized", "",
	}, "\n")
	var seen []Report
	got := Scan(strings.NewReader(in), 1, 3, func(r Report) { seen = append(seen, r) })
	want := Report{Finalized: true, GlobalExit: true, ExitStatus: -3, PeerFailed: true, FailedPE: 2}
	if got != want {
		t.Fatalf("Scan = %+v, want %+v", got, want)
	}
	if len(seen) != 3 || seen[0] != (Report{PeerFailed: true, FailedPE: 2}) || seen[2] != want {
		t.Fatalf("each saw %+v", seen)
	}
}

// A peer that finalized early is the PE's first blamed peer as a failed
// one is: the first of the two lines wins, and a bad one is ignored. The
// Writer writes only the first of PeerFailed and PeerFinalizedEarly.
func TestScanFinalizedEarly(t *testing.T) {
	in := "peer-finalized-early 5\npeer-finalized-early 1\npeer-failed 2\npeer-finalized-early 0\n"
	want := Report{PeerFailed: true, FailedPE: 1, FinalizedEarly: true}
	if got := Scan(strings.NewReader(in), 0, 3, nil); got != want {
		t.Fatalf("Scan = %+v, want %+v", got, want)
	}
	if got := Scan(strings.NewReader("peer-failed 2\npeer-finalized-early 1\n"), 0, 3, nil); got != (Report{PeerFailed: true, FailedPE: 2}) {
		t.Fatalf("a failure then an early Finalize: %+v", got)
	}
	l, pe, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := &Writer{fd: int(pe.Fd())}
	w.PeerFinalizedEarly(2)
	w.PeerFailed(1)
	w.PeerFinalizedEarly(1)
	pe.Close()
	if got := Scan(l, 0, 3, nil); got != (Report{PeerFailed: true, FailedPE: 2, FinalizedEarly: true}) {
		t.Fatalf("Writer: %+v", got)
	}
}

// A PE's garbage is bounded: a line over the length bound, or lines past
// the count bound, end the scan, so the launcher never holds more than a
// few hundred bytes of it.
func TestScanBounds(t *testing.T) {
	long := strings.Repeat("x", 10*maxLine) + "\nfinalized\n"
	if got := Scan(strings.NewReader(long), 0, 2, nil); got.Finalized {
		t.Errorf("a report after an over-long line was taken: %+v", got)
	}
	many := strings.Repeat("noise\n", maxLines) + "finalized\n"
	if got := Scan(strings.NewReader(many), 0, 2, nil); got.Finalized {
		t.Errorf("a report past %d lines was taken: %+v", maxLines, got)
	}
	if got := Scan(io.LimitReader(zeros{}, 1<<20), 0, 2, nil); got != (Report{}) {
		t.Errorf("zeros: %+v", got)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// A Writer on a Pair's PE end reaches Scan on the launcher's; a PE's first
// failed peer only is written; writes after the launcher closed its end
// neither block nor kill (SIGPIPE) the writer.
func TestPairWriter(t *testing.T) {
	l, pe, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// As the PE has it: exec cleared close-on-exec.
	if _, err := unix.FcntlInt(pe.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	w := Open(func(string) string { return strconv.Itoa(int(pe.Fd())) })
	if w == nil {
		t.Fatal("open refused a Pair's socket")
	}
	if fl, err := unix.FcntlInt(pe.Fd(), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Errorf("the descriptor is not close-on-exec: %v %v", fl, err)
	}
	w.PeerFailed(2)
	w.PeerFailed(0)
	w.GlobalExit(7)
	w.Finalized()
	pe.Close()
	got := Scan(l, 1, 3, nil)
	if want := (Report{Finalized: true, GlobalExit: true, ExitStatus: 7, PeerFailed: true, FailedPE: 2}); got != want {
		t.Fatalf("Scan = %+v, want %+v", got, want)
	}

	l2, pe2, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer pe2.Close()
	l2.Close()
	w2 := &Writer{fd: int(pe2.Fd())}
	w2.Finalized() // EPIPE, ignored; a SIGPIPE would end the test binary
	var nilW *Writer
	nilW.Finalized()
	nilW.PeerFailed(1)
}

// The launcher's end honours read deadlines (job.go drains it with one).
func TestPairDeadline(t *testing.T) {
	l, pe, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	defer pe.Close()
	if err := l.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(make([]byte, 1)); !os.IsTimeout(err) {
		t.Fatalf("read past the deadline: %v", err)
	}
}

// open refuses what is not a Unix stream socket: no variable, a standard
// stream, a number that is no descriptor, a file, a pipe.
func TestOpenRefuses(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, v := range []string{"", "x", "1", "-4", "100000", strconv.Itoa(int(f.Fd())), strconv.Itoa(int(w.Fd()))} {
		env := func(k string) string {
			if k == bootstrap.EnvStatusFD {
				return v
			}
			return ""
		}
		if got := Open(env); got != nil {
			t.Errorf("%s=%q: got a writer", bootstrap.EnvStatusFD, v)
		}
	}
}
