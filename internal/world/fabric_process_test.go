//go:build cgo && goshmem_fabric

package world_test

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// These tests run worlds of PE processes on this host whose network paths
// are the libfabric provider's: SHMEM_TRANSPORT=tcp forces the network
// path between PEs of one host, SHMEM_RDMA_PROVIDER=fabric makes it the
// fabric one, and libfabric's tcp;ofi_rxm (or sockets) on loopback stands
// in for an RDMA NIC. CI runs them with -tags goshmem_fabric -run Fabric.

var (
	fabricPEOnce sync.Once
	fabricPE     string
	fabricPEErr  error
)

// fabricBinary builds the test PE program with the fabric provider in it.
func fabricBinary(t *testing.T) string {
	t.Helper()
	fabricPEOnce.Do(func() {
		fabricPE, fabricPEErr = lt.BuildPE(filepath.Dir(peBinary), "goshmem_fabric")
	})
	if fabricPEErr != nil {
		t.Fatalf("building the PE program with -tags goshmem_fabric: %v", fabricPEErr)
	}
	return fabricPE
}

// needProvider skips the test when libfabric cannot open prov on loopback
// here (libfabric-dev builds the test, but a provider may be missing).
func needProvider(t *testing.T, prov string) {
	t.Helper()
	heap, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(heap)
	n, err := fabric.Open(fabric.Config{Rank: 0, NPEs: 1, Heap: heap, Provider: prov, Node: "127.0.0.1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if errors.Is(err, errs.ErrBootstrap) {
		t.Skipf("libfabric provider %q unusable here (libfabric-dev/libfabric1 missing it?): %v", prov, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
}

func fabricEnv(prov string, extra ...string) []string {
	return append([]string{"SHMEM_TRANSPORT=tcp", "SHMEM_RDMA_PROVIDER=fabric",
		"SHMEM_FABRIC_PROVIDER=" + prov, "SHMEM_FABRIC_NODE=127.0.0.1"}, extra...)
}

// TestFabricWorld: 3 PEs over tcp;ofi_rxm (no remote-write events: waits
// re-check) and over sockets (remote-write events ring the bell) check
// wake-up by a fabric put, ordering by Quiet and Fence, gets, atomics,
// collectives and put-signal with values, and that no goroutine of the
// provider outlives Finalize. The fabric warning is logged.
func TestFabricWorld(t *testing.T) {
	for _, prov := range []string{"tcp;ofi_rxm", "sockets"} {
		t.Run(strings.ReplaceAll(prov, ";", "+"), func(t *testing.T) {
			needProvider(t, prov)
			codes, outs := worldOf(t, fabricBinary(t), 3, lt.RoleFabric, fabricEnv(prov)...)
			expectAll(t, codes, outs, 0)
			if !strings.Contains(outs[0], "fabric data path") || !strings.Contains(outs[0], "not encrypted") {
				t.Errorf("no warning that the fabric data path is not encrypted:\n%s", outs[0])
			}
		})
	}
}

// TestFabricStatics: 3 PEs whose paths are the fabric's, each with a
// statics region (WithStatics), reach each other's regions with puts of
// both routes, gets, atomics and put-with-signal either way round
// (RoleFabricStatics): the fabric node registers the region beside the
// heap.
func TestFabricStatics(t *testing.T) {
	for _, prov := range []string{"tcp;ofi_rxm", "sockets"} {
		t.Run(strings.ReplaceAll(prov, ";", "+"), func(t *testing.T) {
			needProvider(t, prov)
			codes, outs := worldOf(t, fabricBinary(t), 3, lt.RoleFabricStatics, fabricEnv(prov)...)
			expectAll(t, codes, outs, 0)
			if !strings.Contains(outs[0], "fabric data path") {
				t.Errorf("PE 0 did not run the fabric data path:\n%s", outs[0])
			}
		})
	}
}

// TestFabricWorldRelay forbids the direct path between PEs 0 and 2: their
// traffic goes through PE 1 on the TCP transport while the other pairs use
// the fabric, so each PE's Quiet and barriers complete both engines.
func TestFabricWorldRelay(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	codes, outs := worldOf(t, fabricBinary(t), 3, lt.RoleFabric, fabricEnv("tcp;ofi_rxm", "SHMEM_RELAY_VIA=0-2:1", "SHMEM_LOG_LEVEL=info")...)
	expectAll(t, codes, outs, 0)
	expectRelay(t, outs[0], 2, 1)
}

// TestFabricPeerDies: a PE exits while the others put to it over the
// fabric and Quiet; they end with ErrPEFailed (exit code 3) naming it.
func TestFabricPeerDies(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	codes, outs := worldOf(t, fabricBinary(t), 3, lt.RoleFabricDie, fabricEnv("tcp;ofi_rxm")...)
	if codes[2] != lt.DieStatus {
		t.Errorf("the dying PE exited %d, want %d:\n%s", codes[2], lt.DieStatus, outs[2])
	}
	for r := 0; r < 2; r++ {
		if codes[r] != lt.ExitPEFailed || !strings.Contains(outs[r], "PE 2") {
			t.Errorf("survivor PE %d exited %d, want 3 (ErrPEFailed naming PE 2); output:\n%s", r, codes[r], outs[r])
		}
	}
}

// TestFabricMixedProviders: a PE on TCP among PEs on the fabric fails
// Init on every PE, naming the PE that differs.
func TestFabricMixedProviders(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	codes, outs := worldOfEnv(t, fabricBinary(t), 2, lt.RoleSPMD, func(r int) []string {
		if r == 1 {
			return []string{"SHMEM_TRANSPORT=tcp", "SHMEM_RDMA_PROVIDER=tcp"}
		}
		return fabricEnv("tcp;ofi_rxm")
	})
	for r, other := range []string{"PE 1", "PE 0"} {
		if codes[r] != lt.ExitInitFailed || !strings.Contains(outs[r], other) || !strings.Contains(outs[r], "SHMEM_RDMA_PROVIDER") {
			t.Errorf("PE %d exited %d, want %d (Init refused) naming %s and SHMEM_RDMA_PROVIDER; output:\n%s", r, codes[r], lt.ExitInitFailed, other, outs[r])
		}
	}
}

// TestFabricGossipWorld: 3 PEs form their world by gossip (WithSeeds),
// each with its rank from a launcher (SHMEM_RANK), and run the fabric
// checks (puts, gets, atomics, barriers with values) over tcp;ofi_rxm.
func TestFabricGossipWorld(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	seed := freeLoopbackAddr(t)
	const n = 3
	codes, outs := runPEsOf(t, fabricBinary(t), launch.Config{NPEs: n,
		Secret: "gossip-fabric-" + strconv.Itoa(os.Getpid()),
		RankEnv: func(r int) []string {
			bind := "127.0.0.1:0"
			if r == 0 {
				bind = seed
			}
			return fabricEnv("tcp;ofi_rxm", lt.EnvRole+"="+lt.RoleFabric, lt.EnvSeeds+"="+seed,
				"SHMEM_GOSSIP_ADDR="+bind, "SHMEM_SYMMETRIC_SIZE=8m")
		}})
	expectAll(t, codes, outs, 0)
	if !strings.Contains(outs[0], "fabric data path") {
		t.Errorf("PE 0 did not run the fabric data path:\n%s", outs[0])
	}
}

// TestFabricGossipNeedsLauncherRank: without a launcher's rank, gossip
// start-up refuses the fabric provider on every PE, saying why.
func TestFabricGossipNeedsLauncherRank(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	seed := freeLoopbackAddr(t)
	codes, outs := runPEsOf(t, fabricBinary(t), launch.Config{NPEs: 1, NoRank: true,
		Secret: "gossip-fabric-" + strconv.Itoa(os.Getpid()),
		RankEnv: func(int) []string {
			return fabricEnv("tcp;ofi_rxm", lt.EnvRole+"="+lt.RoleFabric, lt.EnvSeeds+"="+seed,
				lt.EnvGossipNPEs+"=1", "SHMEM_GOSSIP_ADDR="+seed, "SHMEM_SYMMETRIC_SIZE=8m")
		}})
	if codes[0] != lt.ExitInitFailed || !strings.Contains(outs[0], "WithSeeds") || !strings.Contains(outs[0], "launcher") {
		t.Errorf("fabric gossip PE without a launcher rank exited %d, want %d (Init refused) naming WithSeeds and the launcher:\n%s", codes[0], lt.ExitInitFailed, outs[0])
	}
}

// TestFabricHeapGrows: spmdcheck.Grow (ten times the initial heap
// allocated, written by puts and atomics from every PE, read back, freed,
// allocated again, refused past the limit) on 3 PEs whose paths are the
// fabric's: every growth is registered with the NIC and its key reaches
// the peers.
func TestFabricHeapGrows(t *testing.T) {
	for _, prov := range []string{"tcp;ofi_rxm", "sockets"} {
		t.Run(strings.ReplaceAll(prov, ";", "+"), func(t *testing.T) {
			needProvider(t, prov)
			codes, outs := worldOf(t, fabricBinary(t), 3, lt.RoleGrow,
				fabricEnv(prov, "SHMEM_SYMMETRIC_SIZE=512k", "SHMEM_SYMMETRIC_SIZE_MAX=8m", "SHMEM_LOG_LEVEL=info")...)
			expectAll(t, codes, outs, 0)
			if !strings.Contains(outs[0], "fabric data path") || !strings.Contains(outs[0], "symmetric heap grown") {
				t.Errorf("PE 0 did not grow its heap on the fabric data path:\n%s", outs[0])
			}
		})
	}
}

// TestFabricWorldContexts: spmdcheck.Run, whose Spec part checks contexts
// (each a fabric stream: an endpoint with counters of its own), team
// contexts and non-blocking fetching atomics with values, on 3 PEs over
// tcp;ofi_rxm.
func TestFabricWorldContexts(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	codes, outs := worldOf(t, fabricBinary(t), 3, lt.RoleSPMD, fabricEnv("tcp;ofi_rxm")...)
	expectAll(t, codes, outs, 0)
}
