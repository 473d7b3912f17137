package bootstrap

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/portskip"
)

// EnvPortRange confines every port goshmem listens on (rank 0's
// rendezvous, each PE's data and control listeners, and the fabric
// provider's endpoint when it binds an IP port) to a range, so that a
// firewall can be opened for exactly those ports: "40000-40099".
const EnvPortRange = "SHMEM_PORT_RANGE"

// PortRange is an inclusive range of TCP ports. The zero value means any
// port the kernel picks.
type PortRange struct{ Lo, Hi int }

// Any reports whether r leaves the port to the kernel.
func (r PortRange) Any() bool { return r.Lo == 0 && r.Hi == 0 }

func (r PortRange) String() string {
	if r.Any() {
		return "any"
	}
	return strconv.Itoa(r.Lo) + "-" + strconv.Itoa(r.Hi)
}

// Contains reports whether port is allowed by r.
func (r PortRange) Contains(port int) bool { return r.Any() || port >= r.Lo && port <= r.Hi }

// ParsePortRange reads SHMEM_PORT_RANGE's syntax: "LO-HI" with 1 <= LO <=
// HI <= 65535, or a single port "P"; "" is any port. Errors wrap
// errs.ErrInvalidArgument and quote the text.
func ParsePortRange(s string) (PortRange, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return PortRange{}, nil
	}
	bad := func(why string) (PortRange, error) {
		return PortRange{}, errs.New("ParsePortRange", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%s=%q: %s", EnvPortRange, s, why)
	}
	lo, hi, isRange := strings.Cut(s, "-")
	if !isRange {
		hi = lo
	}
	l, err1 := strconv.Atoi(strings.TrimSpace(lo))
	h, err2 := strconv.Atoi(strings.TrimSpace(hi))
	switch {
	case err1 != nil || err2 != nil:
		return bad("want LO-HI or a single port, in decimal")
	case l < 1 || h > 65535:
		return bad("ports are 1..65535")
	case l > h:
		return bad("the range is empty (LO > HI)")
	}
	return PortRange{Lo: l, Hi: h}, nil
}

// Listen listens on host at a port of r other than those in skip (the
// unique ID's rendezvous port, which rank 0 binds later and which another
// PE's listener must not take first): the kernel's choice when r is Any
// (see listenAvoiding), else a free port of r tried from a random start so
// that the PEs of one host do not all race for the first one
// (portskip.InRange, which the fabric node's endpoint shares). It fails
// with errs.ErrBootstrap naming r when every port of r is taken.
func (r PortRange) Listen(host string, skip ...int) (net.Listener, error) {
	if r.Any() {
		return listenAvoiding(host, skip, net.Listen)
	}
	return portskip.InRange("Listen", errs.NoPE, EnvPortRange+"="+r.String(), "on "+host, r.Lo, r.Hi, skip,
		func(port int) (net.Listener, error) {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil && !errors.Is(err, syscall.EADDRINUSE) {
				return nil, errs.New("Listen", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "listen on %s:%d: %v", host, port, err)
			}
			return ln, err
		})
}

// CheckPort refuses an explicitly configured port (a SHMEM_UID_SESSION_ID
// or MASTER_PORT) that r does not allow, naming both settings: a job
// whose firewall opens r would otherwise hang at start-up.
func (r PortRange) CheckPort(port int, setting string) error {
	if port == 0 || r.Contains(port) {
		return nil
	}
	return errs.New("Listen", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument,
		"%s gives port %d, outside %s=%s", setting, port, EnvPortRange, r)
}

// FreePortIn is FreePort confined to r: a port of r free on host now.
func FreePortIn(r PortRange, host string) (int, error) {
	if r.Any() {
		return FreePort(host)
	}
	ln, err := r.Listen(host)
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
