//go:build cgo && goshmem_fabric

package world_test

import (
	"testing"

	"github.com/goshmem/shmem/internal/failcheck"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// TestFailureMatrixFabric runs the failure table over the libfabric
// data path (tcp;ofi_rxm), as TestFailureMatrixProcesses does over shared
// memory and TCP.
func TestFailureMatrixFabric(t *testing.T) {
	needProvider(t, "tcp;ofi_rxm")
	bin := fabricBinary(t)
	for _, sc := range failcheck.Scenarios() {
		if sc.SimOnly {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			codes, outs := worldOf(t, bin, sc.NPEs, lt.RoleScenario+sc.Name, fabricEnv("tcp;ofi_rxm")...)
			for r := 0; r < sc.NPEs; r++ {
				checkPE(t, sc, r, codes[r], outs[r])
			}
		})
	}
}
