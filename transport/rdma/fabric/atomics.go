//go:build cgo && goshmem_fabric

package fabric

/*
#include "gf.h"
*/
import "C"

import "github.com/goshmem/shmem/transport"

// atomicTable records, per operation and width, how the provider can run
// it. A provider may lack an operation on a type (fi_query_atomic says so):
// the fetching form then falls back to a compare-and-swap loop, and the
// non-fetching form to the fetching one; with no compare-and-swap for the
// width either, the operation fails with errs.ErrInvalidArgument naming the
// provider.
type atomicTable struct {
	fetch [9][2]bool // [transport.AtomicOp][width 4 -> 0, 8 -> 1]: fi_fetch_atomic / fi_compare_atomic works
	post  [9][2]bool // fi_atomic (inject) works
	cswap [2]bool
	read  [2]bool // FI_ATOMIC_READ, used by the fallback to read the word
}

// fiOp maps a transport op to the libfabric op: AtomicFetch reads,
// Set/Swap write, CompareSwap compares.
func fiOp(op transport.AtomicOp) C.int {
	switch op {
	case transport.AtomicFetch:
		return C.FI_ATOMIC_READ
	case transport.AtomicSet, transport.AtomicSwap:
		return C.FI_ATOMIC_WRITE
	case transport.AtomicCompareSwap:
		return C.FI_CSWAP
	case transport.AtomicFetchAdd:
		return C.FI_SUM
	case transport.AtomicFetchAnd:
		return C.FI_BAND
	case transport.AtomicFetchOr:
		return C.FI_BOR
	case transport.AtomicFetchXor:
		return C.FI_BXOR
	}
	return -1
}

func fiType(width int) C.int {
	if width == 4 {
		return C.FI_UINT32
	}
	return C.FI_UINT64
}

func wi(width int) int { return width / 8 } // 4 -> 0, 8 -> 1

func queryAtomics(c *C.gf_node) atomicTable {
	var t atomicTable
	for _, w := range []int{4, 8} {
		dt := fiType(w)
		for op := transport.AtomicFetch; op.Valid(); op++ {
			flavour := C.uint64_t(C.FI_FETCH_ATOMIC)
			if op == transport.AtomicCompareSwap {
				flavour = C.FI_COMPARE_ATOMIC
			}
			t.fetch[op][wi(w)] = C.gf_atomic_ok(c, fiOp(op), dt, flavour) != 0
			if op != transport.AtomicFetch && op != transport.AtomicCompareSwap {
				t.post[op][wi(w)] = C.gf_atomic_ok(c, fiOp(op), dt, 0) != 0
			}
		}
		t.cswap[wi(w)] = t.fetch[transport.AtomicCompareSwap][wi(w)]
		t.read[wi(w)] = t.fetch[transport.AtomicFetch][wi(w)]
	}
	return t
}

// emulate computes what op stores over old: the CAS-loop fallback.
func emulate(op transport.AtomicOp, width int, old, operand uint64) uint64 {
	var v uint64
	switch op {
	case transport.AtomicFetch:
		v = old
	case transport.AtomicSet, transport.AtomicSwap:
		v = operand
	case transport.AtomicFetchAdd:
		v = old + operand
	case transport.AtomicFetchAnd:
		v = old & operand
	case transport.AtomicFetchOr:
		v = old | operand
	case transport.AtomicFetchXor:
		v = old ^ operand
	}
	if width == 4 {
		v &= 0xffffffff
	}
	return v
}
