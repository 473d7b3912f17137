package ctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fabricEnv makes a job's network paths the libfabric provider's: TCP
// forced between the PEs of this host (shmemrun --network) and
// SHMEM_RDMA_PROVIDER=fabric, with prov on loopback standing in for an
// RDMA NIC, as internal/world's Go fabric tests do.
func fabricEnv(prov string) []string {
	return append(os.Environ(), "SHMEM_RDMA_PROVIDER=fabric", "SHMEM_FABRIC_PROVIDER="+prov, "SHMEM_FABRIC_NODE=127.0.0.1")
}

// compileFabric builds testdata/c/name.c against libgoshmem built with
// the libfabric provider (oshcc --fabric). That library is not
// race-built even when this test binary is: a second race build of
// goshmem would cost CI about two minutes, and the Go code it adds is
// race-tested by transport/rdma/fabric and internal/world's fabric tests.
func compileFabric(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "capi", "testdata", "c", name+".c")
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(tools.oshcc, "--fabric", "-O2", "-Wall", "-Werror", src, "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oshcc --fabric %s: %v\n%s", name, err, b)
	}
	return out
}

// fabricFamilies are the families TestFabricFamilies runs, by provider:
// on tcp;ofi_rxm the programs that cover a whole API (the _all ones) and
// team's; on sockets, the one with remote-write events (a watcher wakes
// waiting PEs instead of their polling), whose counter waits do not sleep
// in Debian 12's libfabric (transport/rdma/fabric polls them instead),
// RMA's and the waits'. The other families take the same Go calls behind
// the C API, which TestFamilies' TCP runs cover; all thirteen on both
// providers took CI two minutes more.
var fabricFamilies = map[string][]string{
	"tcp;ofi_rxm": {"rma_all", "amo_all", "wait_all", "reduce_all", "team"},
	"sockets":     {"rma_all", "wait_all"},
}

// TestFabricFamilies runs the API families' C programs with every
// network path on the libfabric provider: a C program on RDMA NICs takes
// these paths (the Go calls behind the C API, none of the mapped C fast
// paths): fabricFamilies, on 3 PEs (team.c splits in halves: 4). Skipped without libfabric-dev,
// and a provider this libfabric lacks is skipped.
func TestFabricFamilies(t *testing.T) {
	if _, err := os.Stat("/usr/include/rdma/fabric.h"); err != nil {
		t.Skip("libfabric-dev is not installed: oshcc --fabric cannot build libgoshmem with the provider")
	}
	setup(t)
	for _, prov := range []string{"tcp;ofi_rxm", "sockets"} {
		for _, name := range fabricFamilies[prov] {
			t.Run(strings.ReplaceAll(prov, ";", "+")+"/"+name, func(t *testing.T) {
				np := 3
				if name == "team" {
					np = 4
				}
				cmd := exec.Command(tools.shmrun, "-np", fmt.Sprint(np), "--network", "--timeout", "60s", compileFabric(t, name))
				cmd.Env = fabricEnv(prov)
				b, err := cmd.CombinedOutput()
				out := string(b)
				if err != nil && strings.Contains(out, fmt.Sprintf("fi_getinfo (provider %q", prov)) && strings.Contains(out, "No data available") {
					t.Skipf("libfabric here has no provider %s:\n%s", prov, out)
				}
				if err != nil || strings.Contains(out, "FAIL") || strings.Count(out, name+" ok") != np {
					t.Fatalf("shmemrun -np %d on %s: %v: want every PE to say %q\n%s", np, prov, err, name+" ok", out)
				}
				if !strings.Contains(out, "fabric data path") {
					t.Fatalf("the job did not run the fabric data path:\n%s", out)
				}
			})
		}
	}
}
