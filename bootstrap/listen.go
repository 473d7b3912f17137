package bootstrap

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/goshmem/shmem/internal/errs"
)

// The environment variables that choose the rendezvous listener's address,
// as in CANN SHMEM. SessionID wins when both are set.
const (
	EnvUIDSessionID  = "SHMEM_UID_SESSION_ID"
	EnvUIDSockIfname = "SHMEM_UID_SOCK_IFNAME"
)

// SourceAuto is Choice.Source when neither variable is set.
const SourceAuto = "auto"

// excludedIfacePrefixes are the interface names automatic selection skips:
// loopback and the virtual devices of containers, bridges and tunnels, whose
// addresses other hosts usually cannot reach.
var excludedIfacePrefixes = [...]string{"lo", "docker", "veth", "br-", "virbr", "tun", "tap"}

// Iface is one network interface as SelectListenAddr sees it; SystemIfaces
// reads the host's, tests fabricate them.
type Iface struct {
	Name    string
	Up      bool // administratively up (IFF_UP)
	Running bool // link ready (IFF_RUNNING)
	Addrs   []netip.Prefix
}

// Choice is where the rank-0 rendezvous listener should listen.
type Choice struct {
	// Host is an IP literal (IPv6 without brackets, a zone kept after '%')
	// or, from SHMEM_UID_SESSION_ID only, a DNS name the caller resolves.
	Host string
	// Port is the port to bind; 0 means bind any free port (Host:0) and put
	// the port the kernel picked into the UniqueID.
	Port uint16
	// Source is EnvUIDSessionID, EnvUIDSockIfname or SourceAuto.
	Source string
	// Iface is the interface the address came from; empty for
	// SHMEM_UID_SESSION_ID.
	Iface string
	// Reason says in words why this address won, for logs and shmem-config.
	Reason string
}

// HostPort returns Host and Port joined for net.Listen ("[v6%zone]:port").
func (c Choice) HostPort() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
}

// CheckListen tries, where the unique ID is made (rank 0's host), that rank
// 0 will be able to listen on the choice and that the other PEs can dial
// it, so that a mistyped SHMEM_UID_SESSION_ID fails there and then rather
// than in rank 0's Init while every other rank waits out its timeout. An
// unspecified address (0.0.0.0, ::) listens everywhere but names no host
// to dial: errs.ErrInvalidArgument. A listen that fails (an address of
// another host, a link-local one without its zone, a port in use) is
// errs.ErrBootstrap. With Port 0 only the host is tried.
func (c Choice) CheckListen() error {
	if ip := net.ParseIP(c.Host); ip != nil && ip.IsUnspecified() {
		return errs.New("GetUniqueID", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument,
			"%s from %s listens on every address but names none the other PEs can dial: give this host's address", c.HostPort(), c.Source)
	}
	ln, err := net.Listen("tcp", c.HostPort())
	if err != nil {
		return errs.New("GetUniqueID", errs.NoPE, errs.NoPE, errs.ErrBootstrap,
			"rank 0 could not listen on %s (from %s) on this host: %v", c.HostPort(), c.Source, err)
	}
	return ln.Close()
}

// AddrPort returns the choice as a netip.AddrPort; ok is false when Host is
// a DNS name.
func (c Choice) AddrPort() (ap netip.AddrPort, ok bool) {
	ip, err := netip.ParseAddr(c.Host)
	if err != nil {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ip, c.Port), true
}

// SelectListenAddr applies CANN SHMEM's rules for the rendezvous listener:
//
//  1. SHMEM_UID_SESSION_ID = ip:port | [ipv6]:port | [ipv6%zone]:port |
//     host:port is used as given. (goshmem also accepts port 0, "any free
//     port", which keeps loopback tests free of fixed-port collisions.)
//  2. else SHMEM_UID_SOCK_IFNAME = name | name:inet4 | name:inet6 picks that
//     interface (an exact name, else the first whose name starts with it),
//     which must be up and running; without a suffix IPv4 is preferred and
//     IPv6 is the fallback. Loopback and link-local addresses are allowed
//     here because the user named the interface, but a routable address on
//     it is preferred; a link-local IPv6 address gets the interface as zone.
//  3. else the first interface, in ifaces order, that is up and running,
//     whose name does not start with lo, docker, veth, br-, virbr, tun or
//     tap, and that has a usable address: not unspecified, loopback
//     (127/8, ::1), IPv4 link-local (169.254/16) or IPv6 link-local
//     (fe80::/10). IPv4 is preferred on that interface.
//
// In modes 2 and 3 Port is 0. Errors wrap errs.ErrInvalidArgument and name
// the variable and what was wrong with it (a bad port, an unknown or down
// interface, no usable address).
func SelectListenAddr(getenv func(string) string, ifaces []Iface) (Choice, error) {
	if v := strings.TrimSpace(getenv(EnvUIDSessionID)); v != "" {
		return fromSessionID(v)
	}
	if v := strings.TrimSpace(getenv(EnvUIDSockIfname)); v != "" {
		return fromIfname(v, ifaces)
	}
	return autoSelect(ifaces)
}

func selectErr(format string, args ...any) error {
	return errs.New("SelectListenAddr", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, format, args...)
}

func fromSessionID(v string) (Choice, error) {
	hp, err := parseHostPort(v, true)
	if err != nil {
		return Choice{}, selectErr("%s: %v", EnvUIDSessionID, err)
	}
	return Choice{
		Host:   hp.host,
		Port:   hp.port,
		Source: EnvUIDSessionID,
		Reason: EnvUIDSessionID + " set to " + v,
	}, nil
}

// family restricts which addresses an interface may offer.
type family int

const (
	famAny family = iota // IPv4 preferred, IPv6 fallback
	fam4
	fam6
)

func (f family) String() string {
	switch f {
	case fam4:
		return "IPv4"
	case fam6:
		return "IPv6"
	}
	return "IPv4 or IPv6"
}

// parseIfname splits "name[:inet4|:inet6]". A colon followed by anything
// else stays part of the name, because Linux alias names (eth0:1) hold one.
func parseIfname(v string) (name string, fam family, err error) {
	name, fam = v, famAny
	if n, ok := strings.CutSuffix(v, ":inet4"); ok {
		name, fam = n, fam4
	} else if n, ok := strings.CutSuffix(v, ":inet6"); ok {
		name, fam = n, fam6
	}
	if name == "" {
		return "", 0, selectErr("%s=%q names no interface", EnvUIDSockIfname, v)
	}
	for _, r := range name {
		if r <= ' ' || r >= 0x7f || r == '/' {
			return "", 0, selectErr("%s=%q: interface name holds a space, '/', control or non-ASCII character", EnvUIDSockIfname, v)
		}
	}
	return name, fam, nil
}

func fromIfname(v string, ifaces []Iface) (Choice, error) {
	name, fam, err := parseIfname(v)
	if err != nil {
		return Choice{}, err
	}
	ifc, ok := findIface(name, ifaces)
	if !ok {
		names := make([]string, len(ifaces))
		for i, ifc := range ifaces {
			names[i] = ifc.Name
		}
		hint := " (interfaces: " + strings.Join(names, ", ") + ")"
		if strings.Contains(name, ":") {
			hint += "; the only suffixes are :inet4 and :inet6"
		}
		return Choice{}, selectErr("%s=%q: unknown interface %q%s", EnvUIDSockIfname, v, name, hint)
	}
	if !ifc.Up || !ifc.Running {
		return Choice{}, selectErr("%s=%q: interface %s is not up and running", EnvUIDSockIfname, v, ifc.Name)
	}
	ip, ok := pickAddr(ifc, fam, true)
	if !ok {
		return Choice{}, selectErr("%s=%q: interface %s has no usable %s address", EnvUIDSockIfname, v, ifc.Name, fam)
	}
	reason := EnvUIDSockIfname + " set to " + v
	if ifc.Name != name {
		reason += " (prefix of " + ifc.Name + ")"
	}
	return Choice{Host: ip.String(), Source: EnvUIDSockIfname, Iface: ifc.Name, Reason: reason}, nil
}

// findIface prefers an exact name and falls back to the first name with the
// prefix, as CANN SHMEM matches by prefix ("eth" finds eth0).
func findIface(name string, ifaces []Iface) (Iface, bool) {
	for _, ifc := range ifaces {
		if ifc.Name == name {
			return ifc, true
		}
	}
	for _, ifc := range ifaces {
		if strings.HasPrefix(ifc.Name, name) {
			return ifc, true
		}
	}
	return Iface{}, false
}

func autoSelect(ifaces []Iface) (Choice, error) {
	for _, ifc := range ifaces {
		if !ifc.Up || !ifc.Running || excludedName(ifc.Name) {
			continue
		}
		if ip, ok := pickAddr(ifc, famAny, false); ok {
			return Choice{
				Host:   ip.String(),
				Source: SourceAuto,
				Iface:  ifc.Name,
				Reason: "first up, running, non-virtual interface with a usable address (set " + EnvUIDSessionID + " or " + EnvUIDSockIfname + " to override)",
			}, nil
		}
	}
	return Choice{}, selectErr("no usable address: no interface is up, running, not lo/docker/veth/br-/virbr/tun/tap, and has an address that is not loopback, link-local or unspecified; set %s or %s", EnvUIDSessionID, EnvUIDSockIfname)
}

func excludedName(name string) bool {
	for _, p := range excludedIfacePrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// routable reports whether other hosts could plausibly reach ip.
func routable(ip netip.Addr) bool {
	return ip.IsValid() && !ip.IsUnspecified() && !ip.IsLoopback() && !ip.IsLinkLocalUnicast() && !ip.IsMulticast()
}

// pickAddr returns ifc's best address of the family: IPv4 before IPv6 for
// famAny, and within a family the first routable address. When allowLocal
// is set a loopback or link-local address is the last resort; a link-local
// IPv6 address then carries the interface name as its zone, without which
// it cannot be bound.
func pickAddr(ifc Iface, fam family, allowLocal bool) (netip.Addr, bool) {
	fams := []family{fam}
	if fam == famAny {
		fams = []family{fam4, fam6}
	}
	for _, f := range fams {
		var local netip.Addr
		for _, p := range ifc.Addrs {
			ip := p.Addr().Unmap()
			if (f == fam4) != ip.Is4() || !ip.IsValid() {
				continue
			}
			if routable(ip) {
				return ip.WithZone(""), true
			}
			if allowLocal && !local.IsValid() && !ip.IsUnspecified() && !ip.IsMulticast() {
				local = ip
			}
		}
		if local.IsValid() {
			if local.Is6() && local.IsLinkLocalUnicast() {
				local = local.WithZone(ifc.Name)
			}
			return local, true
		}
	}
	return netip.Addr{}, false
}

// SystemIfaces reads the host's interfaces for SelectListenAddr. Errors
// wrap errs.ErrBootstrap.
func SystemIfaces() ([]Iface, error) {
	nifs, err := net.Interfaces()
	if err != nil {
		return nil, errs.New("SystemIfaces", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "listing interfaces: %v", err)
	}
	out := make([]Iface, 0, len(nifs))
	for _, n := range nifs {
		addrs, err := n.Addrs()
		if err != nil {
			return nil, errs.New("SystemIfaces", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "addresses of %s: %v", n.Name, err)
		}
		ifc := Iface{Name: n.Name, Up: n.Flags&net.FlagUp != 0, Running: n.Flags&net.FlagRunning != 0}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			ip = ip.Unmap()
			ifc.Addrs = append(ifc.Addrs, netip.PrefixFrom(ip, ones))
		}
		out = append(out, ifc)
	}
	return out, nil
}
