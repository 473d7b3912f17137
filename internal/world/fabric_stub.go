//go:build !(cgo && goshmem_fabric)

package world

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport/rdma/fabric"
)

// openFabric refuses: this build has no libfabric provider, which needs
// cgo and the build tag goshmem_fabric (fabric.go). Keeping it out of the
// default build keeps cgo and libfabric out of it.
func openFabric(cfg fabric.Config) (fabricEndpoint, error) {
	return nil, errs.New("Init", cfg.Rank, errs.NoPE, errs.ErrInvalidArgument,
		"SHMEM_RDMA_PROVIDER=fabric: this program was built without the libfabric provider; build it with cgo, libfabric-dev and -tags goshmem_fabric")
}
