package bootstrap

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string]PortRange{
		"": {}, " ": {}, "40000-40099": {40000, 40099}, "8666": {8666, 8666}, " 1 - 65535 ": {1, 65535},
	} {
		got, err := ParsePortRange(in)
		if err != nil || got != want {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0-10", "10-5", "1-65536", "a-b", "-5", "5-", "1-2-3", "40000:40010"} {
		if _, err := ParsePortRange(in); !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), EnvPortRange) {
			t.Errorf("ParsePortRange(%q): %v, want ErrInvalidArgument naming %s", in, err, EnvPortRange)
		}
	}
}

// Listen stays inside the range, and says so when the range is full.
func TestPortRangeListen(t *testing.T) {
	// A range of two ports that this test holds free by closing its probes.
	a, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := a.Addr().(*net.TCPAddr).Port
	a.Close()
	r := PortRange{port, port}
	ln, err := r.Listen("127.0.0.1")
	if err != nil {
		t.Skipf("port %d was taken again before the test could listen: %v", port, err)
	}
	defer ln.Close()
	if got := ln.Addr().(*net.TCPAddr).Port; !r.Contains(got) {
		t.Fatalf("listening on %d, outside %v", got, r)
	}
	if _, err := r.Listen("127.0.0.1"); !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), "widen the range") {
		t.Fatalf("full range: %v", err)
	}
	ln.Close()
	// A port to skip (the rendezvous's) is never taken, even when free.
	if _, err := r.Listen("127.0.0.1", port); !errors.Is(err, errs.ErrBootstrap) {
		t.Fatalf("range of one skipped port: %v", err)
	}
	if p, err := FreePortIn(PortRange{}, "127.0.0.1"); err != nil || p == 0 {
		t.Fatalf("FreePortIn any: %d, %v", p, err)
	}
}

func TestCheckPort(t *testing.T) {
	r := PortRange{40000, 40099}
	if err := r.CheckPort(40050, EnvUIDSessionID); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckPort(0, EnvUIDSessionID); err != nil {
		t.Fatal(err)
	}
	err := r.CheckPort(8899, EnvUIDSessionID)
	if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), "8899") || !strings.Contains(err.Error(), "40000-40099") {
		t.Fatalf("port outside: %v", err)
	}
	if err := (PortRange{}).CheckPort(8899, EnvUIDSessionID); err != nil {
		t.Fatalf("any range: %v", err)
	}
}
