//go:build cgo && goshmem_fabric

package fabric

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// peerProcEnv makes the test binary a peer process (runPeerProc) instead
// of running tests: a node in another process can be stopped (SIGSTOP)
// with its connections open, which is a peer that never completes.
const peerProcEnv = "GOSHMEM_FABRIC_TEST_PEER"

// runPeerProc opens node 1 of a 2-node world, connects the address of
// node 0 given in hex in peerProcEnv, prints its own address in hex and
// serves until its standard input closes.
func runPeerProc() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 1 }
	a0, err := hex.DecodeString(os.Getenv(peerProcEnv))
	if err != nil {
		return fail(err)
	}
	heap, err := syscall.Mmap(-1, 0, peerProcHeap, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return fail(err)
	}
	for i := range heap {
		heap[i] = byte(i)
	}
	prov, node := testProvider()
	n, err := Open(Config{Rank: 1, NPEs: 2, Heap: heap, Provider: prov, Node: node, Logger: quietLog()})
	if err != nil {
		return fail(err)
	}
	defer n.Close()
	if err := n.Connect([][]byte{a0}); err != nil {
		return fail(err)
	}
	fmt.Printf("%x\n", n.Address())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

const peerProcHeap = 1 << 20

// peerProc is node 1 running in a child process.
type peerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startPeerProc starts node 1 in a child process connected to n (node 0 of
// 2), on n's provider, and connects n to it. The child is killed at the
// end of the test.
func startPeerProc(t *testing.T, n *Node) *peerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// The peer runs n's provider (testProvider reads these).
	cmd.Env = append(os.Environ(), peerProcEnv+"="+hex.EncodeToString(n.Address()),
		"GOSHMEM_FABRIC_PROVIDER="+n.prov, "GOSHMEM_FABRIC_NODE="+n.cfg.Node)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &peerProc{cmd: cmd, stdin: in}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("peer process gave no address: %v", err)
	}
	a1, err := hex.DecodeString(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Connect([][]byte{nil, a1}); err != nil {
		t.Fatal(err)
	}
	return p
}

// stop freezes the peer with its connections open: it answers nothing.
func (p *peerProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The signal is delivered asynchronously: wait until the peer is
	// stopped (WNOWAIT leaves the state for cmd.Wait).
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WSTOPPED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
}

// resume lets a stopped peer run again.
func (p *peerProc) resume(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// kill ends the peer process: the kernel closes its connections.
func (p *peerProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}
