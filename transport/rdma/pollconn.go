package rdma

import (
	"net"
	"time"
)

// DefaultBusyPoll is the poll a read makes before it parks unless
// SHMEM_BUSY_POLL says otherwise (shmem's default for Config.BusyPoll).
const DefaultBusyPoll = 50 * time.Microsecond

// PollingConn returns c with reads that poll the socket the way goshmem's
// own TCP lanes do before they park: the same busyConn and pollBudget
// (at most busyPoll per read, adapting, resting under contention), one
// budget per call, as one node has one. busyPoll 0, or a connection that
// is not TCP, returns c unchanged: reads park at once, as lanes do with
// SHMEM_BUSY_POLL=0.
//
// It exists for references measured in the same mode as goshmem: shmem-perf's
// raw TCP round trip (tcp_rtt_poll) wraps its plain connections with it, so
// that goshmem's latency is compared with a raw round trip that polls alike.
func PollingConn(c net.Conn, busyPoll time.Duration) net.Conn {
	if busyPoll <= 0 {
		return c
	}
	return newBusyConn(c, newPollBudget(busyPoll))
}
