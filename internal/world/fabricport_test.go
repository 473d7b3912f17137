package world

import (
	"encoding/binary"
	"errors"
	"slices"
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

func (f portFabric) Address() []byte { return f.addr }
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
