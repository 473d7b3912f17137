package bootstrap

import (
	"errors"
	"net"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// The kernel's choice of a port to skip (the rendezvous's) is not
// returned: Listen holds it, asks again, and closes it.
func TestListenAvoidingSkipsTheKernelsChoice(t *testing.T) {
	first, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	skip := first.Addr().(*net.TCPAddr).Port
	calls := 0
	kernel := func(network, addr string) (net.Listener, error) {
		calls++
		if calls == 1 {
			return first, nil // the kernel picks the rendezvous port
		}
		return net.Listen(network, addr)
	}
	ln, err := listenAvoiding("127.0.0.1", []int{skip}, kernel)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := ln.Addr().(*net.TCPAddr).Port; got == skip {
		t.Fatalf("listening on the skipped port %d", got)
	}
	if _, err := first.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the held listener on the skipped port is still open: %v", err)
	}
}

// The real kernel, in a network namespace of its own whose ephemeral
// range is two ports: of two listeners on port 0 one would get the
// rendezvous port (the CI failure of examples/allgather, where a PE's
// control listener took it); with the port skipped, one gets the other
// port and the second finds none left.
func TestAnyRangeListenNeverTakesTheRendezvousPort(t *testing.T) {
	type result struct {
		ports []int
		errs  []error
		skip  string
	}
	done := make(chan result)
	go func() {
		// The thread stays in the namespace and ends with this goroutine
		// (it is never unlocked).
		runtime.LockOSThread()
		var res result
		defer func() { done <- res }()
		if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
			res.skip = "no network namespace of its own: " + err.Error()
			return
		}
		if err := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 40001"), 0o644); err != nil {
			res.skip = "cannot narrow the ephemeral range: " + err.Error()
			return
		}
		var held []net.Listener
		for range 2 {
			ln, err := (PortRange{}).Listen("0.0.0.0", 40001)
			res.errs = append(res.errs, err)
			if err == nil {
				held = append(held, ln)
				res.ports = append(res.ports, ln.Addr().(*net.TCPAddr).Port)
			}
		}
		for _, ln := range held {
			ln.Close()
		}
	}()
	res := <-done
	if res.skip != "" {
		t.Skip(res.skip)
	}
	for _, p := range res.ports {
		if p == 40001 {
			t.Fatalf("a listener took the skipped rendezvous port: ports %v, errors %v", res.ports, res.errs)
		}
	}
	if len(res.ports) != 1 || res.ports[0] != 40000 {
		t.Fatalf("ports %v, errors %v; want 40000 once, then no port left", res.ports, res.errs)
	}
}
