package netprobe

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestListenerGone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	// Alive: accepts and waits for the client's bytes (the backlog does
	// that without an Accept).
	if ListenerGone(addr, 100*time.Millisecond) {
		t.Fatal("a live, silent listener was reported gone")
	}
	// Accepts and closes at once: as a dying process's listener does.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if !ListenerGone(addr, 5*time.Second) {
		t.Fatal("a listener that closes what it accepts was reported alive")
	}
	ln.Close()
	<-done
	if !ListenerGone(addr, 5*time.Second) {
		t.Fatal("a closed listener was reported alive")
	}
}

func TestProcessGone(t *testing.T) {
	if ProcessGone(os.Getpid()) || ProcessGone(0) || ProcessGone(-1) {
		t.Fatal("this process, or no pid, reported gone")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	// Reaped by Run: its pid names no process (unless reused at once,
	// which a pid allocator that cycles forward makes vanishingly rare).
	if !ProcessGone(cmd.Process.Pid) {
		t.Fatalf("pid %d of a reaped process reported alive", cmd.Process.Pid)
	}
	// Killed and not reaped yet: a zombie, which kill(pid, 0) still
	// reaches; it has ended all the same.
	z := exec.Command("sleep", "60")
	if err := z.Start(); err != nil {
		t.Skip(err)
	}
	if ProcessGone(z.Process.Pid) {
		t.Fatal("a running process reported gone")
	}
	if err := z.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// The kernel makes it a zombie once the signal is handled; poll the
	// state (no timing is asserted: the loop ends when it is one).
	for !zombieOrReaped(z.Process.Pid) {
		runtime.Gosched()
	}
	if !ProcessGone(z.Process.Pid) {
		t.Fatalf("killed, unreaped pid %d reported alive", z.Process.Pid)
	}
	z.Wait()
}

func zombieOrReaped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err != nil || bytes.Contains(b, []byte(") Z "))
}
