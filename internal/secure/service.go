package secure

import (
	"errors"
	"fmt"

	"github.com/goshmem/shmem/internal/errs"
)

// Service names what a goshmem listener serves. Every listener of a job
// holds the same credentials (the job secret, and the job certificate
// derived from it), so the secret alone cannot tell a rank that dialed
// the unique ID's address whether rank 0's rendezvous answered or, say,
// the control lane of a PE that was handed that port: it would pass
// authentication there, send its hello and see the connection closed,
// and blame PE 0 (a CI run of examples/allgather did). Each side
// announces its service in its hello, and a proof covers it, so a client
// that reached another service learns which at once.
type Service byte

// The services of a job's listeners.
const (
	ServiceRendezvous Service = 'R' // rank 0's unique-ID rendezvous (and its probes)
	ServiceControl    Service = 'L' // a PE's control lane
	ServiceData       Service = 'D' // a PE's data listener (the TCP node)
)

func (s Service) String() string {
	switch s {
	case ServiceRendezvous:
		return "rendezvous"
	case ServiceControl:
		return "control lane"
	case ServiceData:
		return "data listener"
	}
	return fmt.Sprintf("service %#x", byte(s))
}

func (s Service) known() bool {
	return s == ServiceRendezvous || s == ServiceControl || s == ServiceData
}

// ErrOtherService is what Handshake's error wraps (with errs.ErrTLS) when
// the peer is a goshmem endpoint of another service than this side's.
var ErrOtherService = errors.New("the peer serves another goshmem service")

// otherService wraps both ErrOtherService and errs.ErrTLS: no session was
// authenticated.
var otherService = fmt.Errorf("%w (%w)", ErrOtherService, errs.ErrTLS)
