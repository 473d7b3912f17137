package bootstrap

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort returns a port on host that was free a moment ago, for an
// address that must be known before the listener opens (the unique ID
// carries PE 0's port; PE 0 binds it later, at Init).
//
// It prefers ports below the kernel's ephemeral range, because the kernel
// never hands those out to connect or to listen on port 0: a port taken
// from the ephemeral range could meanwhile become another socket's local
// port (seen under load in tests as "address already in use" at Init). It
// falls back to a kernel-chosen port when the ephemeral range starts too
// low to leave room.
func FreePort(host string) (int, error) {
	lo := ephemeralLow("/proc/sys/net/ipv4/ip_local_port_range")
	const first = 10000 // above the well-known and most registered services
	for try := 0; lo-first > 1000 && try < 32; try++ {
		port := first + rand.IntN(lo-first)
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			ln.Close()
			return port, nil
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("no free port on %s: %w", host, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ephemeralLow reads the first port of the kernel's ephemeral range from
// path ("32768\t60999"), or returns 0 when it cannot.
func ephemeralLow(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}
