package rdma

import (
	"runtime"
	"syscall"
	"testing"
)

// TestReadyWatch: pending reports data waiting on a watched socket, and
// only on a watched one.
func TestReadyWatch(t *testing.T) {
	w := newReadyWatch()
	if w == nil {
		t.Skip("no epoll set")
	}
	defer w.close()
	client, server := tcpPair(t)
	fd, ok := socketFD(server)
	if !ok {
		t.Fatal("no descriptor for a TCP connection")
	}
	w.add(fd)
	if w.pending() {
		t.Fatal("pending before anything was sent")
	}
	if _, err := client.Write([]byte("frame")); err != nil {
		t.Fatal(err)
	}
	for !w.pending() {
		runtime.Gosched() // until the bytes have crossed the loopback
	}
	if _, err := server.Read(make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if w.pending() {
		t.Error("pending after the data was read")
	}
	w.remove(fd)
	if _, err := client.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	peek := make([]byte, 1)
	for {
		n, _, err := syscall.Recvfrom(fd, peek, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if n > 0 {
			break // the bytes have arrived
		}
		if err != nil && err != syscall.EAGAIN {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if w.pending() {
		t.Error("pending for a socket no longer watched")
	}
	var nilWatch *readyWatch
	if nilWatch.pending() {
		t.Error("a nil watch reports pending")
	}
}
