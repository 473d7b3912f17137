//go:build race

package udma

import "sync/atomic"

// storeWord is an atomic store under the race detector, which would
// report the plain store racing with the waiter's atomic load when both
// PEs live in one process (the simulator).
func storeWord(w *uint64, v uint64) { atomic.StoreUint64(w, v) }
