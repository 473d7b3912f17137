// Package pestatus carries what a PE tells the goshmem launcher that
// started it about its own run, which exit statuses cannot say: that it
// completed Finalize with every PE, that it called GlobalExit and with
// what status, and which PE it first blamed: one it recorded failed, or
// one it found had called Finalize while it waited for it in a collective. Every PE of a global
// exit exits with its status, and a PE that fails because another failed
// exits non-zero too, so the launcher hears the ends in an order that does
// not tell who started it; with these reports it can.
//
// The launcher (internal/launch) gives each PE one end of a Unix stream
// socket pair as an extra file and names its descriptor in
// bootstrap.EnvStatusFD; the PE (internal/world, through Open) writes one
// short line per event. A socket, not a pipe: a write to it after the
// launcher stopped reading fails (MSG_NOSIGNAL) instead of raising
// SIGPIPE, which would kill a C program. The launcher treats the lines as
// untrusted input (they come from the user's process): Scan bounds their
// length and number and ignores what it does not recognise.
package pestatus

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/bootstrap"
)

// The lines, each ended by a newline.
const (
	lineFinalized  = "finalized"   // Finalize completed with every PE
	lineGlobalExit = "global-exit" // + " <status>": this PE called GlobalExit
	linePeerFailed = "peer-failed" // + " <rank>": the first PE this PE recorded failed
	// + " <rank>": an operation of this PE (a collective, a lock) failed
	// because PE rank called Finalize while it waited for it, before this
	// PE blamed any other.
	linePeerFinalizedEarly = "peer-finalized-early"
)

// Bounds on what Scan reads from one PE: a PE writes at most three lines,
// so anything beyond these is not goshmem's and is dropped.
const (
	maxLine  = 64
	maxLines = 16
)

// Report is what one PE reported on its status socket; its zero value is
// a PE that reported nothing (a program that does not use goshmem, or one
// that ended before Init).
type Report struct {
	// Finalized: the PE's Finalize completed with every PE's (the world
	// ended as the program meant); what the process did afterwards is
	// its own.
	Finalized bool
	// GlobalExit: the PE called GlobalExit(ExitStatus), and every PE of
	// the world was told to exit with that status.
	GlobalExit bool
	ExitStatus int
	// PeerFailed: the PE recorded PE FailedPE failed before recording any
	// other failure; a failure of its own afterwards is likely that one's
	// consequence. With FinalizedEarly, PE FailedPE did not fail: it
	// called Finalize while this PE waited for it (in a collective, or
	// for a lock it held), which failed the wait here: its mistake,
	// whatever its own process did after (it may still be in Finalize,
	// waiting for peers that will not come, or have exited 0).
	PeerFailed     bool
	FailedPE       int
	FinalizedEarly bool
}

// Writer is a PE's end of its status socket. A nil Writer writes nothing,
// so a PE that no launcher of goshmem started calls it all the same.
type Writer struct {
	fd         int
	peerFailed atomic.Bool // only the first PE blamed is reported
}

// Open returns a Writer of the descriptor that getenv's
// bootstrap.EnvStatusFD names, or nil when it names none, or one that is
// not a Unix stream socket (the variable was inherited by a process that
// did not inherit the descriptor: its descriptor of that number is
// something else, which must not be written to). Open marks the
// descriptor close-on-exec: a process the PE starts must neither write in
// its name nor hold the socket open after the PE has ended. It keeps no
// state: each world a launched process forms gets a Writer of its own on
// the one socket (a launched process forms one).
func Open(getenv func(string) string) *Writer {
	fd, err := strconv.Atoi(strings.TrimSpace(getenv(bootstrap.EnvStatusFD)))
	if err != nil || fd < 3 { // 0-2 are the standard streams, never ours
		return nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil
	}
	if typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_STREAM {
		return nil
	}
	if dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil || dom != unix.AF_UNIX {
		return nil
	}
	unix.CloseOnExec(fd)
	return &Writer{fd: fd}
}

// Finalized reports that this PE's Finalize completed with every PE's.
func (w *Writer) Finalized() { w.line(lineFinalized) }

// GlobalExit reports that this PE called GlobalExit(status); only the
// calling PE reports it.
func (w *Writer) GlobalExit(status int) { w.line(lineGlobalExit + " " + strconv.Itoa(status)) }

// PeerFailed reports that this PE recorded PE rank failed; only the first
// call of it or PeerFinalizedEarly writes, as later failures are no
// longer the first this PE knew.
func (w *Writer) PeerFailed(rank int) {
	if w != nil && w.peerFailed.CompareAndSwap(false, true) {
		w.line(linePeerFailed + " " + strconv.Itoa(rank))
	}
}

// PeerFinalizedEarly reports that an operation of this PE failed because
// PE rank called Finalize while this PE waited for it; it shares
// PeerFailed's once: the first PE this PE blamed is reported.
func (w *Writer) PeerFinalizedEarly(rank int) {
	if w != nil && w.peerFailed.CompareAndSwap(false, true) {
		w.line(linePeerFinalizedEarly + " " + strconv.Itoa(rank))
	}
}

// line writes s and a newline. It never blocks and never raises SIGPIPE:
// a launcher that stopped reading loses the report, not the PE.
func (w *Writer) line(s string) {
	if w == nil {
		return
	}
	_ = unix.Sendto(w.fd, []byte(s+"\n"), unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, nil)
}

// Pair makes a PE's status socket: the launcher reads the first file
// (with deadlines: it is in non-blocking mode, on the runtime's poller),
// and gives the PE the second, to be closed in the launcher once the PE
// has started. Both are close-on-exec in the launcher; exec.Cmd's
// ExtraFiles clears that for the PE's copy only.
func Pair() (launcher, pe *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(uintptr(fds[0]), "pe-status"), os.NewFile(uintptr(fds[1]), "pe-status-pe"), nil
}

// Scan reads one PE's reports from r until end of file, an error, or the
// bounds (a line longer than 64 bytes, or 16 lines), and returns them.
// self is the PE's rank and npes the job's size: a peer-failed report
// naming no other PE of the job is ignored, as is every line Scan does
// not recognise. each, if not nil, gets the report so far after every line
// that changed it.
func Scan(r io.Reader, self, npes int, each func(Report)) Report {
	var rep Report
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, maxLine), maxLine)
	for n := 0; n < maxLines && sc.Scan(); n++ {
		if !rep.apply(sc.Text(), self, npes) {
			continue
		}
		if each != nil {
			each(rep)
		}
	}
	return rep
}

// apply adds line to rep and reports whether it changed rep. The first
// GlobalExit and the first peer blamed (failed or finalized early) win: a
// PE reports each once.
func (rep *Report) apply(line string, self, npes int) bool {
	word, arg, _ := strings.Cut(line, " ")
	switch word {
	case lineFinalized:
		if arg != "" || rep.Finalized {
			return false
		}
		rep.Finalized = true
		return true
	case lineGlobalExit:
		status, err := strconv.ParseInt(arg, 10, 32)
		if err != nil || rep.GlobalExit {
			return false
		}
		rep.GlobalExit, rep.ExitStatus = true, int(status)
		return true
	case linePeerFailed, linePeerFinalizedEarly:
		rank, err := strconv.Atoi(arg)
		if err != nil || rank < 0 || rank >= npes || rank == self || rep.PeerFailed {
			return false
		}
		rep.PeerFailed, rep.FailedPE, rep.FinalizedEarly = true, rank, word == linePeerFinalizedEarly
		return true
	}
	return false
}
