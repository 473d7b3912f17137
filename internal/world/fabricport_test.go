package world

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// sockaddrIn is the endpoint name tcp;ofi_rxm, sockets and udp;ofi_rxd
// give: a sockaddr_in of 127.0.0.1 and port.
func sockaddrIn(port int) []byte {
	ep := make([]byte, sockaddrInLen)
	binary.NativeEndian.PutUint16(ep, syscall.AF_INET)
	binary.BigEndian.PutUint16(ep[2:], uint16(port))
	copy(ep[4:], []byte{127, 0, 0, 1})
	return ep
}

func fabricAddrEP(t *testing.T, ep []byte) []byte {
	t.Helper()
	b, err := fabric.Address{Rank: 0, Provider: "tcp;ofi_rxm", HeapSize: 1 << 20, Key: 7, EP: ep}.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// portFabric is a fabric node whose endpoint is bound to a port.
type portFabric struct {
	fabricEndpoint
	addr   []byte
	closed *[]int
	port   int
}

func (f portFabric) Address() []byte  { return f.addr }
func (f portFabric) Provider() string { return "tcp;ofi_rxm" }
func (f portFabric) Close() error {
	*f.closed = append(*f.closed, f.port)
	return nil
}

// The fabric node, whose endpoint libfabric binds to a port the kernel
// chooses, is opened again when that port is the rendezvous's (or a
// gossip seed's), as the control and data listeners are; the node on the
// skipped port is held until another is open, then closed.
func TestOpenFabricAvoidsLaterPorts(t *testing.T) {
	j := &joiner{cfg: Config{UID: bootstrap.UniqueID{Addr: "127.0.0.1:40001"}}}
	var closed, opened []int
	kernel := []int{40001, 40000}
	open := func(cfg fabric.Config) (fabricEndpoint, error) {
		if len(closed) > 0 {
			t.Error("the node on the skipped port was closed before another was open")
		}
		p := kernel[len(opened)]
		opened = append(opened, p)
		return portFabric{addr: fabricAddrEP(t, sockaddrIn(p)), closed: &closed, port: p}, nil
	}
	n, err := openFabricAvoiding(fabric.Config{Rank: 0, NPEs: 2}, j.laterPorts(), open)
	if err != nil {
		t.Fatal(err)
	}
	if got := endpointPort(n.Address()); got != 40000 {
		t.Errorf("the node's endpoint is on port %d, want 40000", got)
	}
	if !slices.Equal(opened, []int{40001, 40000}) || !slices.Equal(closed, []int{40001}) {
		t.Errorf("opened %v, closed %v; want [40001 40000] and the skipped [40001]", opened, closed)
	}
}

// An Open's failure is returned as it is (fabric.Open names its step),
// after the held node is closed.
func TestOpenFabricAvoidingFails(t *testing.T) {
	var closed []int
	calls := 0
	open := func(cfg fabric.Config) (fabricEndpoint, error) {
		calls++
		if calls == 1 {
			return portFabric{addr: fabricAddrEP(t, sockaddrIn(40001)), closed: &closed, port: 40001}, nil
		}
		return nil, errs.New("fabric.Open", cfg.Rank, errs.NoPE, errs.ErrBootstrap, "fi_endpoint: Address already in use")
	}
	_, err := openFabricAvoiding(fabric.Config{Rank: 1, NPEs: 2}, []int{40001}, open)
	if !errors.Is(err, errs.ErrBootstrap) || !slices.Equal(closed, []int{40001}) {
		t.Errorf("err %v, closed %v; want ErrBootstrap and the held node closed", err, closed)
	}
}

// endpointPort reads the port of sockaddr_in and sockaddr_in6 names only.
func TestEndpointPort(t *testing.T) {
	in6 := make([]byte, sockaddrIn6Len)
	binary.NativeEndian.PutUint16(in6, syscall.AF_INET6)
	binary.BigEndian.PutUint16(in6[2:], 40002)
	ib := make([]byte, 48) // a sockaddr_ib (verbs over InfiniBand)
	binary.NativeEndian.PutUint16(ib, 27)
	binary.BigEndian.PutUint16(ib[2:], 40003)
	for _, c := range []struct {
		name string
		addr []byte
		want int
	}{
		{"sockaddr_in", fabricAddrEP(t, sockaddrIn(40001)), 40001},
		{"sockaddr_in6", fabricAddrEP(t, in6), 40002},
		{"sockaddr_ib", fabricAddrEP(t, ib), 0},
		{"sockaddr_in cut short", fabricAddrEP(t, sockaddrIn(40001)[:8]), 0},
		{"string name", fabricAddrEP(t, []byte("fi_shm://12345")), 0},
		{"not an address", []byte("garbage"), 0},
	} {
		if got := endpointPort(c.addr); got != c.want {
			t.Errorf("%s: port %d, want %d", c.name, got, c.want)
		}
	}
}

// rangeKernel opens fake fabric nodes at the port asked for, failing as
// fabric.Open does (EADDRINUSE and ErrBootstrap) for the taken ones, and
// records the ports tried and the nodes closed.
type rangeKernel struct {
	t      *testing.T
	taken  map[int]bool
	tried  []int
	closed []int
	bind   func(port int) []byte // the endpoint name of a node asked for port; nil: a sockaddr_in of it
}

func (k *rangeKernel) open(cfg fabric.Config) (fabricEndpoint, error) {
	k.tried = append(k.tried, cfg.Port)
	if k.taken[cfg.Port] {
		return nil, errs.New("fabric.Open", cfg.Rank, errs.NoPE, fmt.Errorf("%w: %w", errs.ErrBootstrap, syscall.EADDRINUSE),
			"fi_endpoint (provider \"tcp;ofi_rxm\", port %d): Address already in use", cfg.Port)
	}
	ep := sockaddrIn(cfg.Port)
	if k.bind != nil {
		ep = k.bind(cfg.Port)
	}
	return portFabric{addr: fabricAddrEP(k.t, ep), closed: &k.closed, port: cfg.Port}, nil
}

// With SHMEM_PORT_RANGE the fabric node opens at a port of it: a taken
// port (fabric.Open fails with EADDRINUSE) passes to the next, the ports
// later bound by the job (laterPorts) are never tried, and each port is
// tried once, in turn from a random start (run a number of times so that
// the start falls on the taken ones too).
func TestOpenFabricInRange(t *testing.T) {
	rng := bootstrap.PortRange{Lo: 40000, Hi: 40004}
	for range 64 {
		k := &rangeKernel{t: t, taken: map[int]bool{40000: true, 40002: true, 40004: true}}
		n, err := openFabricIn(rng, fabric.Config{Rank: 1, NPEs: 2}, []int{40001}, k.open)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointPort(n.Address()); got != 40003 {
			t.Fatalf("the node is on port %d, want 40003 (the one free port not skipped)", got)
		}
		// From wherever it started, the ports not skipped in turn up to
		// the free one, wrapping around.
		order := []int{40000, 40002, 40003, 40004}
		s := max(slices.Index(order, k.tried[0]), 0)
		want := append(slices.Clone(order[s:]), order[:s]...)
		want = want[:slices.Index(want, 40003)+1]
		if !slices.Equal(k.tried, want) {
			t.Fatalf("tried %v, want %v: the ports in turn, each once, never the skipped 40001", k.tried, want)
		}
		if len(k.closed) != 0 {
			t.Fatalf("closed %v", k.closed)
		}
	}
}

// With every port of the range taken (or skipped) it fails with
// ErrBootstrap naming fabric.Open, the PE and SHMEM_PORT_RANGE, having
// tried every port not skipped once.
func TestOpenFabricInRangeAllTaken(t *testing.T) {
	k := &rangeKernel{t: t, taken: map[int]bool{40000: true, 40002: true}}
	_, err := openFabricIn(bootstrap.PortRange{Lo: 40000, Hi: 40002}, fabric.Config{Rank: 1, NPEs: 2, Node: "10.0.0.5"}, []int{40001}, k.open)
	var e *errs.Error
	if !errors.As(err, &e) || !errors.Is(err, errs.ErrBootstrap) || e.Op != "fabric.Open" || e.PE != 1 ||
		!strings.Contains(err.Error(), "SHMEM_PORT_RANGE=40000-40002") || !strings.Contains(err.Error(), "fabric endpoint on 10.0.0.5") {
		t.Fatalf("openFabricIn: %v; want fabric.Open (PE 1) wrapping ErrBootstrap naming SHMEM_PORT_RANGE=40000-40002 and the node", err)
	}
	slices.Sort(k.tried)
	if !slices.Equal(k.tried, []int{40000, 40002}) {
		t.Errorf("tried %v, want 40000 and 40002 once each", k.tried)
	}
}

// A failure other than a taken port is returned as it is, at once.
func TestOpenFabricInRangeOtherFailure(t *testing.T) {
	tries := 0
	boom := errs.New("fabric.Open", 0, errs.NoPE, errs.ErrBootstrap, "fi_getinfo: No data available")
	_, err := openFabricIn(bootstrap.PortRange{Lo: 40000, Hi: 40009}, fabric.Config{Rank: 0, NPEs: 2}, nil, func(fabric.Config) (fabricEndpoint, error) {
		tries++
		return nil, boom
	})
	if err != boom || tries != 1 {
		t.Fatalf("openFabricIn: %v after %d tries; want fabric.Open's error after 1", err, tries)
	}
}

// A provider whose address names no IP port (verbs over InfiniBand, shm)
// ignores the port and binds none a firewall sees: its node is taken as
// it is. A node on a port other than the one asked for is closed and
// refused.
func TestOpenFabricInRangeNoIPPort(t *testing.T) {
	k := &rangeKernel{t: t, bind: func(int) []byte { return []byte("fi_shm://12345") }}
	n, err := openFabricIn(bootstrap.PortRange{Lo: 40000, Hi: 40009}, fabric.Config{Rank: 0, NPEs: 2}, nil, k.open)
	if err != nil || endpointPort(n.Address()) != 0 || len(k.tried) != 1 || len(k.closed) != 0 {
		t.Fatalf("openFabricIn: %v, tried %v, closed %v; want the first node, kept", err, k.tried, k.closed)
	}
	k = &rangeKernel{t: t, bind: func(int) []byte { return sockaddrIn(50000) }}
	_, err = openFabricIn(bootstrap.PortRange{Lo: 40000, Hi: 40000}, fabric.Config{Rank: 0, NPEs: 2}, nil, k.open)
	if !errors.Is(err, errs.ErrBootstrap) || !strings.Contains(err.Error(), "port 50000") || !slices.Equal(k.closed, []int{40000}) {
		t.Fatalf("openFabricIn: %v, closed %v; want ErrBootstrap naming port 50000 and the node closed", err, k.closed)
	}
}

// Without a range it is openFabricAvoiding: the kernel chooses the port
// (fabric.Config.Port 0).
func TestOpenFabricInAnyRange(t *testing.T) {
	k := &rangeKernel{t: t}
	n, err := openFabricIn(bootstrap.PortRange{}, fabric.Config{Rank: 0, NPEs: 2}, []int{40001}, k.open)
	if err != nil || !slices.Equal(k.tried, []int{0}) || endpointPort(n.Address()) != 0 {
		t.Fatalf("openFabricIn: %v, asked for ports %v; want one node at port 0", err, k.tried)
	}
}
