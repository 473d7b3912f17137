// Package shmem is goshmem, a PGAS library in the style of OpenSHMEM 1.5:
// a fixed set of processes share a partitioned global address space and
// read and write each other's parts directly, without the owner taking part.
//
// # PEs and worlds
//
// A program runs as npes processing elements (PEs), numbered 0..npes-1,
// that together form a world. Each PE gets a *PE from Init (one per
// process, started by a launcher, a unique ID or gossip) or, for
// development and tests, from sim.Run, which runs a whole world as
// goroutines of one process. MyPE and NPEs say who is who; the code is
// usually SPMD, every PE running the same function and branching on MyPE.
// Several worlds may live in one process; they share nothing, and an
// object of one is rejected by the others. Finalize ends a PE (collective)
// and releases its heap, mappings, sockets and goroutines; GlobalExit ends
// the whole world at once.
//
// # The symmetric heap
//
// Every PE has a symmetric heap of the same size. Malloc, Calloc, Align,
// Realloc and Free are collective: every PE calls them with the same
// arguments in the same order, and because the allocator is deterministic
// the object lands at the same offset on every PE. The result is a Sym[T],
// a small comparable value naming "this object, on any PE": Put, Get,
// atomics and waits take a Sym and a target PE number. Sym.Local gives the
// calling PE's own part as an ordinary slice; Ptr gives a load/store view
// of a peer's part when that peer's memory is mapped into this process
// (same node). A call whose arguments differ between PEs fails with
// ErrInvalidArgument on every PE; an exhausted heap fails with
// ErrOutOfMemory, naming the sizes. With WithHeapLimit the heap grows, a
// segment at a time on every PE, when an allocation does not fit.
//
// # Communication
//
// Put, Get, P, G, IPut and IGet move data between the caller's memory and
// a Sym on any PE; PutSignal also updates a signal word that the target
// waits on with SignalWaitUntil. The atomics (AtomicFetchAdd,
// AtomicCompareSwap, ...) act on element 0 of a Sym on one PE and are
// atomic with respect to every other atomic on that word, remote or local.
// WaitUntil and Test (and their All, Any and Some forms) watch the caller's
// own memory until a comparison holds. SetLock and ClearLock are a fair
// distributed lock. Many goroutines of one PE may issue all of these at
// once; collective calls must still come in the same order on every PE.
//
// # Ordering and completion
//
// The memory model is OpenSHMEM's:
//
//   - Put returns when its source may be reused; the data is delivered by
//     the next Quiet. PutNBI and GetNBI may still be in flight when they
//     return: Quiet completes them (GetNBI's buffer is filled by then).
//   - Fence orders the puts, atomics and signals to each PE: those issued
//     before it are delivered before those issued after it, so a flag put
//     after a Fence is never seen before the data put ahead of it. Use
//     Quiet, not Fence, to order across different target PEs.
//   - PutSignal delivers the data before the signal.
//   - BarrierAll completes every outstanding operation of the caller
//     (Quiet) and then waits for all PEs; after it every PE sees every put
//     issued before it. SyncAll only waits for all PEs; it completes
//     nothing, so pair it with Quiet when the data matters.
//   - ClearLock completes the caller's puts before releasing the lock, so
//     the next holder sees them.
//   - A context (CreateCtx, Team.CreateCtx) is a handle on the same PE
//     with its own Fence and Quiet: a context's Quiet completes its own
//     operations and does not wait for another context's. The PE itself
//     is the default context; its Quiet, BarrierAll and ClearLock complete
//     its own operations, not those of its contexts.
//
// On the simulator and between PEs of one node every operation completes
// before it returns, so Quiet is nearly free there; code must still call
// it where the model requires, to stay correct across nodes.
//
// # Errors
//
// Every failure is an error that errors.Is matches against one of the
// sentinels (ErrInvalidArgument, ErrOutOfMemory, ErrPEFailed, ErrTimeout,
// ErrFinalized, ErrBootstrap, ErrTLS, ErrDeadlock); its message names the
// operation and the PEs involved. Bad input (a PE out of range, a range
// past the end of an object, a freed Sym or one from another world, a call
// after Finalize) is reported, never acted on, and no call panics on it.
//
// # Failures and mistakes
//
// Every blocking call ends. Each team-wide operation (barrier, sync, each
// collective, collective allocation, team split and destroy, Finalize) is
// numbered per team with its kind, and a PE that has waited a couple of
// milliseconds reads what its peers are in:
//
//   - PEs that called different collectives as the same operation all fail
//     with ErrInvalidArgument naming who called what ("PE 0 called
//     Barrier, PEs 1-3 Reduce"); the team is unusable afterwards;
//   - a PE that called Finalize while others wait for it in a collective,
//     a lock it holds, or (when it was the last other PE) a wait on a
//     word, makes them fail with ErrPEFailed ("PE 1 called Finalize while
//     this PE waits in BarrierAll"): only Finalize matches Finalize;
//   - a PE that died (its process ended, its sim function failed or
//     panicked) fails every wait with ErrPEFailed naming it with one line
//     of reason;
//   - GlobalExit ends every PE's calls with an error from which ExitStatus
//     reads the status (under shmemrun the processes exit with it);
//   - WithOpTimeout (sim.WithOpTimeout) bounds every blocking call
//     (ErrTimeout, naming the call, the PEs it waits on and those not
//     there yet); there is no bound by default. A PE whose barrier or
//     collective times out gives up the team: the others still in that
//     operation, or reaching it or a later one, fail at once with
//     ErrPEFailed naming it ("PE 2 gave up operation 3 (Barrier) of team
//     world");
//   - the simulator ends a world in which every running PE is blocked and
//     nothing can change with ErrDeadlock, listing what each PE is blocked
//     in; processes log that after WithHangReport (SHMEM_HANG_REPORT), and
//     print it on SIGQUIT.
//
// The right way to end a PE is therefore to return the first error and
// call Finalize on every path, keeping its error:
//
//	err := body(p)
//	return errors.Join(err, p.Finalize())
//
// Finalize always releases everything, also after a failed collective,
// and reports what happened to the world: ErrPEFailed naming the PEs that
// failed during the run, or the GlobalExit that ended it. Calling it
// again returns the same result.
package shmem
