//go:build !amd64 || race

package udma

import "sync/atomic"

// storeWord is an atomic store where a plain one will not do: on a CPU
// that may make a plain store visible before earlier ones (arm64), a
// barrier's signal could overtake the puts before it, and the release of
// an atomic store orders them first; under the race detector, a plain
// store would race with the waiter's atomic load when both PEs live in
// one process (the simulator).
func storeWord(w *uint64, v uint64) { atomic.StoreUint64(w, v) }
