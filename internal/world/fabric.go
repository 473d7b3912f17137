//go:build cgo && goshmem_fabric

package world

import "github.com/goshmem/shmem/transport/rdma/fabric"

// openFabric opens this PE's libfabric node (build tag goshmem_fabric).
func openFabric(cfg fabric.Config) (fabricEndpoint, error) {
	n, err := fabric.Open(cfg)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return n, nil
}
