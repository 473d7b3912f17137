package shmem_test

import (
	"testing"

	"github.com/goshmem/shmem/internal/spmdcheck"
)

// TestSpecOnSimulator runs the OpenSHMEM 1.5 checks that the process tests
// run over shared memory and TCP (internal/spmdcheck.Spec) on simulated
// worlds of several sizes.
func TestSpecOnSimulator(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		run(t, n, spmdcheck.Spec)
	}
}
