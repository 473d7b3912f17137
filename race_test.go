//go:build race

package shmem_test

// raceEnabled: under the race detector sync.Pool drops what it is given
// at random, so a wait's slow way (transport.LocalBell's timers) makes
// allocations that a normal build does not: TestBarrierAllocatesNothing
// does not run under it.
const raceEnabled = true
