package shmem_test

import (
	"testing"

	"github.com/goshmem/shmem"
)

// The spec edge cases of spec_*_edges_test.go on the process backends:
// PEs started by unique ID in this process, over shared memory and over
// TCP (WithNetworkOnly), where atomics, signals and fences take the
// transports' own paths instead of the simulator's.
func TestSpecEdgesOnProcessBackends(t *testing.T) {
	bodies := []struct {
		name string
		n    int
		fn   func(p *shmem.PE) error
	}{
		{"EmptyWaitSets", 2, specEmptyWaitSets},
		{"WaitExclusionsRemote", 2, specWaitExclusionsRemote},
		{"PutSignalOps", 3, specPutSignalOps},
		{"PutSignalNoData", 2, specPutSignalNoData},
		{"AtomicValuesUint32", 3, specAtomicValues[uint32]},
		{"AtomicValuesInt64", 3, specAtomicValues[int64]},
		{"AtomicFloats", 2, specAtomicFloats},
		{"FenceOrdersEveryKind", 2, specFenceOrdersEveryKind},
		{"CtxDestroyCompletes", 4, specCtxDestroyCompletes},
		{"DestroyInvalidTeam", 4, specDestroyInvalidTeam},
		{"Split2DConfigsPerTeam", 6, specSplit2DConfigsPerTeam},
		{"ReallocOfZeroSymAllocates", 3, specReallocOfZeroSymAllocates},
		{"CollectivesStridedTeam", 7, specCollectivesStridedTeam},
		{"TeamDestroyQuietsItsContexts", 2, specTeamDestroyQuietsItsContexts},
		{"CtxFetchNBI", 3, specCtxFetchNBI},
		{"Split3DDestroyParent", 12, specSplit3DDestroyParent},
	}
	for _, net := range []struct {
		name string
		opts []shmem.Option
	}{{"shm", nil}, {"tcp", []shmem.Option{shmem.WithNetworkOnly()}}} {
		for _, b := range bodies {
			t.Run(net.name+"/"+b.name, func(t *testing.T) {
				staticsWorld(t, b.n, 64, net.opts, func(p *shmem.PE, _ []byte) error { return b.fn(p) })
			})
		}
	}
}
