package bootstrap

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// maxHostPortLen bounds every host:port string this package accepts. A DNS
// name is at most 253 bytes; with brackets, a zone and ":65535" a valid
// address always fits.
const maxHostPortLen = 255

// hostPort is a validated rendezvous address: Host is an IP literal (an IPv6
// zone kept, no brackets) or a DNS name, Port is 0..65535.
type hostPort struct {
	host string
	port uint16
	ip   netip.Addr // valid when host is an IP literal
}

// parseHostPort validates s as "ip:port", "[ipv6]:port", "[ipv6%zone]:port"
// or "host:port". Port 0 is accepted only when allowZeroPort is set. The
// returned error text says what was wrong; callers wrap it with their
// operation and sentinel.
func parseHostPort(s string, allowZeroPort bool) (hostPort, error) {
	if s == "" {
		return hostPort{}, fmt.Errorf("empty address")
	}
	if len(s) > maxHostPortLen {
		return hostPort{}, fmt.Errorf("address is %d bytes, longer than %d", len(s), maxHostPortLen)
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			return hostPort{}, fmt.Errorf("address %q holds a space, control or non-ASCII character", s)
		}
	}
	host, portStr, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
			return hostPort{}, fmt.Errorf("address %q: an IPv6 address must be written [ipv6]:port", s)
		}
		return hostPort{}, fmt.Errorf("address %q is not host:port: %v", s, stripAddrErr(err))
	}
	port, err := parsePort(portStr, allowZeroPort)
	if err != nil {
		return hostPort{}, fmt.Errorf("address %q: %v", s, err)
	}
	if host == "" {
		return hostPort{}, fmt.Errorf("address %q has no host", s)
	}
	bracketed := strings.HasPrefix(s, "[")
	if ip, err := netip.ParseAddr(host); err == nil {
		if bracketed != ip.Is6() || ip.Is4In6() {
			return hostPort{}, fmt.Errorf("address %q: only IPv6 addresses go in brackets, and they must", s)
		}
		return hostPort{host: host, port: port, ip: ip}, nil
	}
	if bracketed || strings.ContainsAny(host, ":%") {
		return hostPort{}, fmt.Errorf("address %q: %q is not an IPv6 address", s, host)
	}
	if !validHostname(host) {
		return hostPort{}, fmt.Errorf("address %q: %q is neither an IP address nor a host name", s, host)
	}
	return hostPort{host: host, port: port}, nil
}

// stripAddrErr drops the *net.AddrError wrapping so messages do not repeat
// the address.
func stripAddrErr(err error) string {
	if ae, ok := err.(*net.AddrError); ok {
		return ae.Err
	}
	return err.Error()
}

// parsePort accepts 1..65535 written in plain decimal (0 too when allowZero);
// signs, spaces and leading zeros beyond a single "0" are refused so that one
// port has one spelling.
func parsePort(s string, allowZero bool) (uint16, error) {
	if s == "" {
		return 0, fmt.Errorf("bad port: missing")
	}
	if len(s) > 5 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("bad port %q", s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad port %q: not a decimal number", s)
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, fmt.Errorf("bad port %d: above 65535", n)
	}
	if n == 0 && !allowZero {
		return 0, fmt.Errorf("bad port 0: must be 1..65535")
	}
	return uint16(n), nil
}

// validHostname reports whether s is a DNS name: dot-separated labels of
// letters, digits, '-' and '_', 1..63 bytes each, not starting or ending
// with '-', 253 bytes at most, and a last label that is not all digits (so a
// malformed IPv4 address such as 300.1.1.1 is never taken for a name).
func validHostname(s string) bool {
	if len(s) == 0 || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
			if !ok {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}
