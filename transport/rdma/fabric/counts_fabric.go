//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import (
	"github.com/goshmem/shmem/internal/errs"
)

// setCounts takes counter which (0 write, 1 read) of the engine's
// endpoint, and what the engine issued towards it, to v, with no
// operation outstanding: for tests that run an endpoint where its counts
// wrap (counts.go). The caller is inside the node.
func (e *engine) setCounts(which int, v uint64) error {
	if rc := C.gf_cntr_set(e.ep, C.int(which), C.uint64_t(v)); rc != 0 {
		return errs.New("setCounts", e.n.rank(), errs.NoPE, errs.ErrInvalidArgument, "fi_cntr_set: %s", fiStrerror(int(rc)))
	}
	e.issued[which].Store(v)
	return nil
}

// cReached is gf.c's gf_cntr_reached, for the test that holds it to
// reached.
func cReached(count, want uint64) bool {
	return C.gf_cntr_reached(C.uint64_t(count), C.uint64_t(want)) != 0
}
