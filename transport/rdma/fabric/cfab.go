//go:build cgo && goshmem_fabric

package fabric

// The C side keeps every object libfabric holds a pointer to: the fid
// handles, the completion contexts (one per slot) and the registered bounce
// buffers. Go passes only indexes and, for synchronous inject calls, a
// pointer to Go memory that C does not keep.

/*
#cgo LDFLAGS: -lfabric
#include "gf.h"
*/
import "C"
