package ctest

import "testing"

// TestAllocationRefusalsNameTheCall: refused allocations return NULL with
// a last error that starts with the entry point called and says why. A
// shmem_calloc whose count*size overflows size_t left the last error
// empty; aclshmem_malloc, aclshmem_calloc, aclshmem_align and
// aclshmem_free reported their refusals as shmem_malloc's (and so on),
// and shmem_realloc(NULL, n) as shmem_malloc's.
func TestAllocationRefusalsNameTheCall(t *testing.T) {
	setup(t)
	prog := compile(t, "badalloc")
	passesOnBothPaths(t, prog, "badalloc")
}
