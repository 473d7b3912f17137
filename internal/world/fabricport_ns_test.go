//go:build cgo && goshmem_fabric && linux

package world

import (
	"log/slog"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/transport/udma"
)

// The real libfabric, in a network namespace of its own whose ephemeral
// range is two ports: a tcp;ofi_rxm or sockets endpoint binds one at
// fi_endpoint, and the kernel hands bind(2) on port 0 the odd port first
// (as it did to the node before startFabric skipped it: the node then sat
// on the rendezvous port rank 0 binds later). startFabric must leave the
// unique ID's port, 40001, alone and open the node on 40000.
func TestStartFabricNeverTakesTheRendezvousPort(t *testing.T) {
	for _, prov := range []string{"tcp;ofi_rxm", "sockets"} {
		t.Run(prov, func(t *testing.T) {
			port, skip, err := startFabricInNamespace(t, prov)
			switch {
			case skip != "":
				t.Skip(skip)
			case err != nil:
				t.Fatal(err)
			case port != 40000:
				t.Fatalf("the fabric node's endpoint is on port %d, want 40000 (40001 is the rendezvous's)", port)
			}
		})
	}
}

// startFabricInNamespace runs startFabric for rank 0 of a world whose
// unique ID's port is 40001 on a thread in a new network namespace, and
// returns the port of the node's endpoint; skip says why it could not run.
func startFabricInNamespace(t *testing.T, prov string) (port int, skip string, err error) {
	uid, err := bootstrap.NewUniqueID("127.0.0.1:40001", false, [32]byte{})
	if err != nil {
		t.Fatal(err)
	}
	j := &joiner{job: uid.JobName(), log: slog.New(slog.DiscardHandler), cfg: Config{
		UID: uid, Rank: 0, NPEs: 1, HeapSize: 1 << 16, Provider: ProviderFabric,
		Fabric: FabricConfig{Provider: prov, Node: "127.0.0.1"},
	}}
	t.Cleanup(func() { _, _ = udma.Reap(j.job) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The thread stays in the namespace and ends with this goroutine
		// (it is never unlocked); libfabric binds on it.
		runtime.LockOSThread()
		if e := syscall.Unshare(syscall.CLONE_NEWNET); e != nil {
			skip = "no network namespace of its own: " + e.Error()
			return
		}
		if e := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte("40000 40001"), 0o644); e != nil {
			skip = "cannot narrow the ephemeral range: " + e.Error()
			return
		}
		var u undo
		defer func() { _ = u.close() }()
		if err = j.startFabric(&u); err == nil {
			port = endpointPort(j.fab.Address())
		}
	}()
	<-done
	return port, skip, err
}
