//go:build !(cgo && goshmem_fabric)

package fabric

// Available reports whether this build has the libfabric provider: build
// with cgo and -tags goshmem_fabric to get it.
const Available = false
