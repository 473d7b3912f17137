package bootstrap_test

import (
	"fmt"
	"net/netip"

	"github.com/goshmem/shmem/bootstrap"
)

func ExampleSelectListenAddr() {
	ifaces := []bootstrap.Iface{
		{Name: "lo", Up: true, Running: true, Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
		{Name: "docker0", Up: true, Running: true, Addrs: []netip.Prefix{netip.MustParsePrefix("172.17.0.1/16")}},
		{Name: "eth0", Up: true, Running: true, Addrs: []netip.Prefix{
			netip.MustParsePrefix("fe80::1/64"), netip.MustParsePrefix("192.0.2.10/24")}},
	}
	noEnv := func(string) string { return "" }
	c, err := bootstrap.SelectListenAddr(noEnv, ifaces)
	fmt.Println(c.HostPort(), c.Source, c.Iface, err)

	session := func(k string) string {
		if k == bootstrap.EnvUIDSessionID {
			return "[::1]:29500"
		}
		return ""
	}
	c, err = bootstrap.SelectListenAddr(session, ifaces)
	fmt.Println(c.HostPort(), c.Source, err)
	// Output:
	// 192.0.2.10:0 auto eth0 <nil>
	// [::1]:29500 SHMEM_UID_SESSION_ID <nil>
}

func ExampleParseSize() {
	for _, s := range []string{"1073741824", "512m", "2G", "1GiB", "1.5g"} {
		n, err := bootstrap.ParseSize(s)
		fmt.Println(n, err != nil)
	}
	// Output:
	// 1073741824 false
	// 536870912 false
	// 2147483648 false
	// 1073741824 false
	// 1610612736 false
}

func ExampleParseUniqueID() {
	uid, err := bootstrap.NewUniqueID("127.0.0.1:29500", false, [32]byte{})
	if err != nil {
		panic(err)
	}
	back, err := bootstrap.ParseUniqueID(uid.String())
	fmt.Println(back == uid, back.Addr, err)
	// Output: true 127.0.0.1:29500 <nil>
}
