package world_test

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/bootstrap"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// freeRange returns a range of n ports of which the first was free a
// moment ago, below the kernel's ephemeral range (as GetUniqueID's ports
// are, so that no outgoing connection takes one meanwhile); the test asks
// for fewer ports than it holds, so a few taken since do not matter.
func freeRange(t *testing.T, n int) bootstrap.PortRange {
	t.Helper()
	lo, err := bootstrap.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	lo = min(lo, 65535-n)
	return bootstrap.PortRange{Lo: lo, Hi: lo + n - 1}
}

// TestPortRange: with SHMEM_PORT_RANGE the unique ID's port is drawn from
// the range and a world of processes (rendezvous, control and data
// listeners) forms inside it; a unique-ID address whose port lies outside
// the range is refused with an error naming both.
func TestPortRange(t *testing.T) {
	r := freeRange(t, 64)
	t.Setenv(bootstrap.EnvPortRange, r.String())
	uid := lt.LoopbackUID(t, false)
	_, p, _ := net.SplitHostPort(uid.Addr)
	if port, _ := strconv.Atoi(p); !r.Contains(port) {
		t.Fatalf("unique ID port %d outside %v", port, r)
	}
	codes, outs := world(t, 3, lt.RoleHello, "SHMEM_TRANSPORT=tcp", bootstrap.EnvPortRange+"="+r.String())
	expectAll(t, codes, outs, 0)

	outside := r.Lo - 1
	t.Setenv(bootstrap.EnvUIDSessionID, "127.0.0.1:"+strconv.Itoa(outside))
	_, err := shmem.GetUniqueID()
	if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), strconv.Itoa(outside)) || !strings.Contains(err.Error(), r.String()) {
		t.Fatalf("GetUniqueID with port %d outside %v: %v", outside, r, err)
	}
}
