package main

/*
#include "gs.h"
*/
import "C"

import (
	"time"

	"github.com/goshmem/shmem"
)

// unmapEvery is how often a PE looks for peers recorded failed (unmapper).
// A look costs one atomic load a PE, but the wake-up costs an idle PE
// CPU (tens of µs a wake on a VM; idle PEs were made to sleep 10-160 ms,
// see bench/idle), so a loop on a dead peer's mapping ends within 50 ms of
// the failure being recorded, not at once.
const unmapEvery = 50 * time.Millisecond

// unmapper takes the PEs goshmem records failed out of the C side's
// tables of mapped peers (gs_peer_failed), so that an access to one takes
// the Go path and ends with ErrPEFailed naming it, as a Go program's does.
// Without it a mapped peer's memory outlives the peer, and a program
// spinning on shmem_long_g or shmem_long_atomic_fetch of a flag the dead
// PE was to set read the mapping forever. The look is on its own
// goroutine, not on the RMA path: a put or get to a mapped peer stays a
// memcpy with no check. A PE that maps no peer (TCP forced, one PE a
// host) has no unmapper. stop ends it; done is closed once it has.
type unmapper struct {
	stop, done chan struct{}
}

// startUnmapper starts p's unmapper, once the C tables are set up.
func startUnmapper(p *shmem.PE) *unmapper {
	u := &unmapper{stop: make(chan struct{}), done: make(chan struct{})}
	go u.run(p)
	return u
}

func (u *unmapper) run(p *shmem.PE) {
	defer close(u.done)
	me, n := p.MyPE(), p.NPEs()
	gone := make([]bool, n)
	t := time.NewTicker(unmapEvery)
	defer t.Stop()
	for {
		select {
		case <-u.stop:
			return
		case <-t.C:
		}
		// A PE that finalized or exited finds every peer inaccessible:
		// that is not their failure.
		if !p.Accessible(me) {
			continue
		}
		for pe := 0; pe < n; pe++ {
			if pe != me && !gone[pe] && !p.Accessible(pe) {
				gone[pe] = true
				C.gs_peer_failed(C.int(pe))
			}
		}
	}
}

// end stops the unmapper and returns once it can no longer touch the C
// tables, which the caller (finalize) is about to clear.
func (u *unmapper) end() {
	close(u.stop)
	<-u.done
}
