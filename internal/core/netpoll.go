package core

import "time"

// pollerKick keeps a thread in the Go runtime's network poller while a PE
// waits, for PEs whose heap is written by goroutines that read sockets (the
// rdma server).
//
// Why it is needed: a waiting PE either polls (a running goroutine) or
// sleeps in futex(2) (a goroutine in a system call keeps its P). When the
// runtime's polling thread has just handed the last socket event to a
// goroutine, no thread is left blocked in the poller, and nothing polls
// again until a thread runs out of work or sysmon looks (every 10 ms once
// the process is quiet). The write the PE waits for then sits in a socket
// buffer for up to 10 ms: a TCP barrier between two processes took 5-7 ms
// instead of 0.2 ms.
//
// How: arming a timer due before every other one makes the runtime wake a
// thread for an idle P so that timer is served (runtime.wakeNetPoller);
// that thread, finding nothing else to run, blocks in the poller, where
// socket events reach it. The timer does nothing when it fires. Reset and
// Stop neither allocate nor block, and the kick happens only when a wait
// outlasts its first tight polls.
type pollerKick struct{ t *time.Timer }

func newPollerKick() *pollerKick {
	t := time.AfterFunc(time.Hour, func() {})
	t.Stop()
	return &pollerKick{t: t}
}

// kick makes sure a thread will be in the network poller. A nil kick (a PE
// without network paths) does nothing.
func (k *pollerKick) kick() {
	if k != nil {
		k.t.Reset(time.Microsecond)
	}
}

// stop disarms the timer, if it has not fired yet.
func (k *pollerKick) stop() {
	if k != nil {
		k.t.Stop()
	}
}
