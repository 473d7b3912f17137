package bootstrap

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestFreePortBelowEphemeralRange(t *testing.T) {
	lo := ephemeralLow("/proc/sys/net/ipv4/ip_local_port_range")
	if lo < 12000 {
		t.Skipf("ephemeral range starts at %d: no room below it", lo)
	}
	for i := 0; i < 20; i++ {
		port, err := FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if port < 10000 || port >= lo {
			t.Fatalf("port %d outside [10000, %d)", port, lo)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", port, err)
		}
		ln.Close()
	}
}

func TestEphemeralLow(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int{"32768\t60999\n": 32768, "1024 65535": 1024, "": 0, "x y": 0, "1 2 3": 0} {
		p := filepath.Join(dir, "range")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := ephemeralLow(p); got != want {
			t.Errorf("ephemeralLow(%q) = %d, want %d", content, got, want)
		}
	}
	if got := ephemeralLow(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("missing file: %d, want 0", got)
	}
}
