package bootstrap

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// env returns a getenv over a fixed map.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func pfx(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, v := range s {
		out[i] = netip.MustParsePrefix(v)
	}
	return out
}

func up(name string, addrs ...string) Iface {
	return Iface{Name: name, Up: true, Running: true, Addrs: pfx(addrs...)}
}

// A typical host: loopback, a container bridge, then the real NIC (the
// addresses are documentation ranges; nothing here is ever bound).
var hostIfaces = []Iface{
	up("lo", "127.0.0.1/8", "::1/128"),
	up("docker0", "172.17.0.1/16"),
	up("eth0", "fe80::1/64", "2001:db8::10/64", "192.0.2.10/24"),
	up("ib0", "198.51.100.7/24"),
}

func TestSelectListenAddr(t *testing.T) {
	cases := []struct {
		name   string
		getenv func(string) string
		ifaces []Iface
		host   string
		port   uint16
		source string
		iface  string
	}{
		// SHMEM_UID_SESSION_ID forms.
		{"session ipv4", env(EnvUIDSessionID, "127.0.0.1:1234"), hostIfaces, "127.0.0.1", 1234, EnvUIDSessionID, ""},
		{"session ipv6", env(EnvUIDSessionID, "[::1]:886"), hostIfaces, "::1", 886, EnvUIDSessionID, ""},
		{"session ipv6 zone", env(EnvUIDSessionID, "[fe80::1%eth0]:886"), hostIfaces, "fe80::1%eth0", 886, EnvUIDSessionID, ""},
		{"session host", env(EnvUIDSessionID, "localhost:8888"), hostIfaces, "localhost", 8888, EnvUIDSessionID, ""},
		{"session fqdn", env(EnvUIDSessionID, "node-3.rack_2.example:65535"), nil, "node-3.rack_2.example", 65535, EnvUIDSessionID, ""},
		{"session port 0", env(EnvUIDSessionID, "127.0.0.1:0"), nil, "127.0.0.1", 0, EnvUIDSessionID, ""},
		{"session trimmed", env(EnvUIDSessionID, " 127.0.0.1:5 \n"), nil, "127.0.0.1", 5, EnvUIDSessionID, ""},
		{"session wins over ifname", env(EnvUIDSessionID, "127.0.0.1:9", EnvUIDSockIfname, "eth0"), hostIfaces, "127.0.0.1", 9, EnvUIDSessionID, ""},
		{"session needs no interfaces", env(EnvUIDSessionID, "[::1]:1"), nil, "::1", 1, EnvUIDSessionID, ""},

		// SHMEM_UID_SOCK_IFNAME forms.
		{"ifname prefers ipv4", env(EnvUIDSockIfname, "eth0"), hostIfaces, "192.0.2.10", 0, EnvUIDSockIfname, "eth0"},
		{"ifname inet4", env(EnvUIDSockIfname, "eth0:inet4"), hostIfaces, "192.0.2.10", 0, EnvUIDSockIfname, "eth0"},
		{"ifname inet6 skips link-local", env(EnvUIDSockIfname, "eth0:inet6"), hostIfaces, "2001:db8::10", 0, EnvUIDSockIfname, "eth0"},
		{"ifname ipv6 fallback", env(EnvUIDSockIfname, "v6only"), []Iface{up("v6only", "fe80::2/64", "2001:db8::2/64")}, "2001:db8::2", 0, EnvUIDSockIfname, "v6only"},
		{"ifname link-local v6 gets zone", env(EnvUIDSockIfname, "eth1:inet6"), []Iface{up("eth1", "fe80::5/64")}, "fe80::5%eth1", 0, EnvUIDSockIfname, "eth1"},
		{"ifname loopback allowed", env(EnvUIDSockIfname, "lo"), hostIfaces, "127.0.0.1", 0, EnvUIDSockIfname, "lo"},
		{"ifname loopback v6", env(EnvUIDSockIfname, "lo:inet6"), hostIfaces, "::1", 0, EnvUIDSockIfname, "lo"},
		{"ifname virtual allowed", env(EnvUIDSockIfname, "docker0"), hostIfaces, "172.17.0.1", 0, EnvUIDSockIfname, "docker0"},
		{"ifname prefix", env(EnvUIDSockIfname, "et"), hostIfaces, "192.0.2.10", 0, EnvUIDSockIfname, "eth0"},
		{"ifname exact beats prefix", env(EnvUIDSockIfname, "eth1"), []Iface{up("eth10", "192.0.2.1/24"), up("eth1", "192.0.2.2/24")}, "192.0.2.2", 0, EnvUIDSockIfname, "eth1"},
		{"ifname alias name", env(EnvUIDSockIfname, "eth0:1"), []Iface{up("eth0:1", "192.0.2.9/24")}, "192.0.2.9", 0, EnvUIDSockIfname, "eth0:1"},
		{"ifname alias with suffix", env(EnvUIDSockIfname, "eth0:1:inet4"), []Iface{up("eth0:1", "192.0.2.9/24")}, "192.0.2.9", 0, EnvUIDSockIfname, "eth0:1"},
		{"ifname mapped v4", env(EnvUIDSockIfname, "eth0:inet4"), []Iface{up("eth0", "::ffff:192.0.2.4/120")}, "192.0.2.4", 0, EnvUIDSockIfname, "eth0"},
		{"ifname routable v4 beats link-local v4", env(EnvUIDSockIfname, "eth0"), []Iface{up("eth0", "169.254.1.1/16", "192.0.2.8/24")}, "192.0.2.8", 0, EnvUIDSockIfname, "eth0"},
		{"ifname link-local v4 last resort", env(EnvUIDSockIfname, "eth0:inet4"), []Iface{up("eth0", "0.0.0.0/0", "169.254.1.1/16")}, "169.254.1.1", 0, EnvUIDSockIfname, "eth0"},

		// Automatic selection.
		{"auto typical host", env(), hostIfaces, "192.0.2.10", 0, SourceAuto, "eth0"},
		{"auto first eligible interface wins", env(), []Iface{up("ens1", "2001:db8::1/64"), up("ens2", "192.0.2.1/24")}, "2001:db8::1", 0, SourceAuto, "ens1"},
		{"auto ipv4 preferred on interface", env(), []Iface{up("ens1", "2001:db8::1/64", "192.0.2.1/24")}, "192.0.2.1", 0, SourceAuto, "ens1"},
		{"auto skips down", env(), []Iface{{Name: "eth0", Up: false, Running: true, Addrs: pfx("192.0.2.1/24")}, up("eth1", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "eth1"},
		{"auto skips not running", env(), []Iface{{Name: "eth0", Up: true, Running: false, Addrs: pfx("192.0.2.1/24")}, up("eth1", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "eth1"},
		{"auto skips lo prefix", env(), []Iface{up("lo0", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips docker", env(), []Iface{up("docker0", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips veth", env(), []Iface{up("veth12ab", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips br-", env(), []Iface{up("br-1f2e", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto keeps br without dash", env(), []Iface{up("bridge0", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.1", 0, SourceAuto, "bridge0"},
		{"auto skips virbr", env(), []Iface{up("virbr0", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips tun", env(), []Iface{up("tun0", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips tap", env(), []Iface{up("tap3", "192.0.2.1/24"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips 0.0.0.0", env(), []Iface{up("a", "0.0.0.0/0"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips 169.254", env(), []Iface{up("a", "169.254.3.4/16"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips 127/8", env(), []Iface{up("a", "127.1.2.3/8"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips ::", env(), []Iface{up("a", "::/0"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips ::1", env(), []Iface{up("a", "::1/128"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto skips fe80::/10", env(), []Iface{up("a", "fe80::1/64", "febf::1/64"), up("e", "192.0.2.2/24")}, "192.0.2.2", 0, SourceAuto, "e"},
		{"auto takes fec0 (outside fe80::/10)", env(), []Iface{up("a", "fec0::1/64")}, "fec0::1", 0, SourceAuto, "a"},
		{"auto usable after unusable on same iface", env(), []Iface{up("a", "169.254.3.4/16", "10.1.2.3/8")}, "10.1.2.3", 0, SourceAuto, "a"},
		{"auto empty ifname is unset", env(EnvUIDSockIfname, "  "), hostIfaces, "192.0.2.10", 0, SourceAuto, "eth0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SelectListenAddr(c.getenv, c.ifaces)
			if err != nil {
				t.Fatalf("SelectListenAddr: %v", err)
			}
			if got.Host != c.host || got.Port != c.port || got.Source != c.source || got.Iface != c.iface {
				t.Fatalf("got host=%q port=%d source=%q iface=%q, want %q %d %q %q",
					got.Host, got.Port, got.Source, got.Iface, c.host, c.port, c.source, c.iface)
			}
			if got.Reason == "" {
				t.Fatal("empty Reason")
			}
			// HostPort must be what net.Listen takes and must split back.
			h, p, err := net.SplitHostPort(got.HostPort())
			if err != nil || h != c.host {
				t.Fatalf("HostPort() = %q does not split back to %q: %v", got.HostPort(), c.host, err)
			}
			_ = p
		})
	}
}

func TestSelectListenAddrErrors(t *testing.T) {
	downEth := []Iface{{Name: "eth0", Up: true, Running: false, Addrs: pfx("192.0.2.1/24")}}
	cases := []struct {
		name   string
		getenv func(string) string
		ifaces []Iface
		want   string
	}{
		{"session no port", env(EnvUIDSessionID, "127.0.0.1"), nil, "missing port"},
		{"session bad port", env(EnvUIDSessionID, "127.0.0.1:http"), nil, "bad port \"http\""},
		{"session port too big", env(EnvUIDSessionID, "127.0.0.1:70000"), nil, "above 65535"},
		{"session negative port", env(EnvUIDSessionID, "127.0.0.1:-1"), nil, "bad port"},
		{"session empty port", env(EnvUIDSessionID, "127.0.0.1:"), nil, "bad port: missing"},
		{"session unbracketed v6", env(EnvUIDSessionID, "::1:80"), nil, "[ipv6]:port"},
		{"session unclosed bracket", env(EnvUIDSessionID, "[::1:80"), nil, "missing ']'"},
		{"session bad v6", env(EnvUIDSessionID, "[::g]:80"), nil, "not an IPv6"},
		{"session empty zone", env(EnvUIDSessionID, "[fe80::1%]:80"), nil, "not an IPv6"},
		{"session v4 bracketed", env(EnvUIDSessionID, "[10.0.0.1]:80"), nil, "brackets"},
		{"session host bracketed", env(EnvUIDSessionID, "[localhost]:80"), nil, "not an IPv6"},
		{"session no host", env(EnvUIDSessionID, ":80"), nil, "no host"},
		{"session bad host", env(EnvUIDSessionID, "-bad-:80"), nil, "neither an IP"},
		{"session bad ipv4", env(EnvUIDSessionID, "10.0.0.256:80"), nil, "neither an IP"},
		{"session inner space", env(EnvUIDSessionID, "a b:80"), nil, "space"},
		{"session label too long", env(EnvUIDSessionID, strings.Repeat("a", 64)+".example:80"), nil, "neither an IP"},
		{"session trailing dot", env(EnvUIDSessionID, "host.example.:80"), nil, "neither an IP"},
		{"session numeric tld", env(EnvUIDSessionID, "1.2.3:80"), nil, "neither an IP"},
		{"session label ends with dash", env(EnvUIDSessionID, "a-.b:80"), nil, "neither an IP"},
		{"session too long", env(EnvUIDSessionID, strings.Repeat("a.", 127)+"a:8080"), nil, "longer than 255"},
		{"ifname unknown", env(EnvUIDSockIfname, "ens9"), hostIfaces, "unknown interface \"ens9\" (interfaces: lo, docker0, eth0, ib0)"},
		{"ifname bad suffix", env(EnvUIDSockIfname, "eth0:inet5"), hostIfaces, "the only suffixes are :inet4 and :inet6"},
		{"ifname suffix only", env(EnvUIDSockIfname, ":inet4"), hostIfaces, "names no interface"},
		{"ifname slash", env(EnvUIDSockIfname, "eth0/1"), hostIfaces, "'/'"},
		{"ifname down", env(EnvUIDSockIfname, "eth0"), downEth, "not up and running"},
		{"ifname no v4", env(EnvUIDSockIfname, "v6:inet4"), []Iface{up("v6", "2001:db8::1/64")}, "no usable IPv4 address"},
		{"ifname no v6", env(EnvUIDSockIfname, "eth0:inet6"), []Iface{up("eth0", "192.0.2.1/24")}, "no usable IPv6 address"},
		{"ifname no addrs", env(EnvUIDSockIfname, "eth0"), []Iface{up("eth0")}, "no usable IPv4 or IPv6 address"},
		{"ifname only unspecified", env(EnvUIDSockIfname, "eth0"), []Iface{up("eth0", "0.0.0.0/0", "::/0")}, "no usable"},
		{"auto nothing", env(), nil, "no usable address"},
		{"auto only virtual and local", env(), []Iface{
			up("lo", "127.0.0.1/8"), up("docker0", "172.17.0.1/16"), up("veth1", "10.0.0.1/8"),
			up("br-x", "10.0.0.2/8"), up("virbr0", "10.0.0.3/8"), up("tun0", "10.0.0.4/8"), up("tap0", "10.0.0.5/8"),
			up("eth0", "169.254.0.1/16", "fe80::1/64", "::1/128", "127.0.0.2/8", "0.0.0.0/0", "::/0"),
			{Name: "eth1", Up: false, Running: false, Addrs: pfx("192.0.2.1/24")},
		}, "no usable address"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SelectListenAddr(c.getenv, c.ifaces)
			if !errors.Is(err, errs.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInvalidArgument mentioning %q", err, c.want)
			}
			if got != (Choice{}) {
				t.Fatalf("returned %+v with the error", got)
			}
			if strings.Contains(c.name, "session") && !strings.Contains(err.Error(), EnvUIDSessionID) {
				t.Fatalf("error %v does not name %s", err, EnvUIDSessionID)
			}
			if strings.Contains(c.name, "ifname") && !strings.Contains(err.Error(), EnvUIDSockIfname) {
				t.Fatalf("error %v does not name %s", err, EnvUIDSockIfname)
			}
		})
	}
}

func TestChoiceAddrPort(t *testing.T) {
	c := Choice{Host: "fe80::1%eth0", Port: 7}
	ap, ok := c.AddrPort()
	if !ok || ap != netip.MustParseAddrPort("[fe80::1%eth0]:7") {
		t.Fatalf("AddrPort() = %v, %v", ap, ok)
	}
	if c.HostPort() != "[fe80::1%eth0]:7" {
		t.Fatalf("HostPort() = %q", c.HostPort())
	}
	if _, ok := (Choice{Host: "localhost", Port: 1}).AddrPort(); ok {
		t.Fatal("AddrPort of a host name reported ok")
	}
}

// TestSessionIDLoopbackBinds checks the one real-socket path: a session ID
// on loopback with port 0 yields a HostPort that net.Listen accepts.
func TestSessionIDLoopbackBinds(t *testing.T) {
	c, err := SelectListenAddr(env(EnvUIDSessionID, "127.0.0.1:0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", c.HostPort())
	if err != nil {
		t.Fatalf("listen %s: %v", c.HostPort(), err)
	}
	defer ln.Close()
	ap := netip.MustParseAddrPort(ln.Addr().String())
	if !ap.Addr().IsLoopback() || ap.Port() == 0 {
		t.Fatalf("bound %v", ap)
	}
	// The bound address must make a valid unique ID.
	if _, err := NewUniqueID(ap.String(), false, [32]byte{}); err != nil {
		t.Fatal(err)
	}
}

func TestSystemIfaces(t *testing.T) {
	ifs, err := SystemIfaces()
	if err != nil {
		t.Fatal(err)
	}
	// Every Linux host has a loopback interface holding 127.0.0.1.
	var sawLoopback bool
	for _, ifc := range ifs {
		for _, p := range ifc.Addrs {
			if !p.IsValid() {
				t.Fatalf("%s: invalid prefix %v", ifc.Name, p)
			}
			if p.Addr() == netip.MustParseAddr("127.0.0.1") {
				sawLoopback = true
				if !ifc.Up {
					t.Fatalf("%s holds 127.0.0.1 but is not up", ifc.Name)
				}
			}
			if p.Addr().Is4In6() {
				t.Fatalf("%s: mapped address %v not unmapped", ifc.Name, p)
			}
		}
	}
	if !sawLoopback {
		t.Fatalf("no interface holds 127.0.0.1: %+v", ifs)
	}
}

func FuzzSelectListenAddr(f *testing.F) {
	f.Add("127.0.0.1:1234", "")
	f.Add("[fe80::1%eth0]:886", "")
	f.Add("localhost:0", "")
	f.Add("", "eth0:inet6")
	f.Add("", "lo")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, session, ifname string) {
		c, err := SelectListenAddr(env(EnvUIDSessionID, session, EnvUIDSockIfname, ifname), hostIfaces)
		if err != nil {
			if !errors.Is(err, errs.ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		hp := c.HostPort()
		if _, err := parseHostPort(hp, true); err != nil {
			t.Fatalf("choice %+v: HostPort %q does not reparse: %v", c, hp, err)
		}
		if c.Port != 0 {
			if _, err := NewUniqueID(hp, false, [32]byte{}); err != nil {
				t.Fatalf("choice %+v does not make a unique ID: %v", c, err)
			}
		}
	})
}
