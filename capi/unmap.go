package main

/*
#include "gs.h"
*/
import "C"

import "github.com/goshmem/shmem"

// unmapper takes the PEs goshmem records failed out of the C side's
// tables of mapped peers (gs_peer_failed), so that an access to one takes
// the Go path and ends with ErrPEFailed naming it, as a Go program's does.
// Without it a mapped peer's memory outlives the peer, and a program
// spinning on shmem_long_g or shmem_long_atomic_fetch of a flag the dead
// PE was to set read the mapping forever. It hears of failures from the
// PE's failure handler (PE.OnFailure) and changes the tables on its own
// goroutine, not on the RMA path: a put or get to a mapped peer stays a
// memcpy with no check. (It used to look at every peer every 50 ms,
// waking an idle PE 20 times a second and leaving a dead peer mapped for
// up to that long.) A PE that maps no peer (TCP forced, one PE a host)
// has no unmapper. end stops it.
type unmapper struct {
	p          *shmem.PE
	failed     chan int // ranks recorded failed; room for every PE, so a send never waits
	stop, done chan struct{}
}

// startUnmapper starts p's unmapper, once the C tables are set up.
func startUnmapper(p *shmem.PE) *unmapper {
	u := &unmapper{p: p, failed: make(chan int, p.NPEs()), stop: make(chan struct{}), done: make(chan struct{})}
	go u.run()
	p.OnFailure(func(pe int, _ string) { u.failed <- pe })
	return u
}

func (u *unmapper) run() {
	defer close(u.done)
	for {
		select {
		case <-u.stop:
			return
		case pe := <-u.failed:
			C.gs_peer_failed(C.int(pe))
		}
	}
}

// end stops the unmapper and returns once it can no longer touch the C
// tables, which the caller (finalize) is about to clear.
func (u *unmapper) end() {
	u.p.OnFailure(nil)
	close(u.stop)
	<-u.done
}
