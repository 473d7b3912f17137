package world

import (
	"slices"

	"github.com/goshmem/shmem/internal/core"
)

// pathKinds names, for the metrics, the kind of the path makePaths made
// to each rank: shared memory (this PE's own included), a relay, the
// fabric or TCP.
func (j *joiner) pathKinds() []core.PathKind {
	ks := make([]core.PathKind, j.cfg.NPEs)
	for r := range ks {
		switch {
		case slices.Contains(j.shared, r):
			ks[r] = core.PathShm
		case j.via[j.cfg.Rank][r] != direct:
			ks[r] = core.PathRelay
		case j.fab != nil:
			ks[r] = core.PathFabric
		default:
			ks[r] = core.PathTCP
		}
	}
	return ks
}
