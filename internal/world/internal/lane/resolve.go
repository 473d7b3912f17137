package lane

import (
	"strconv"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
)

// Address is the protoactor address of rank's process: a PID with it
// reaches rank's actors over the lane (the resolver New registers).
func Address(rank int) string { return addrPrefix + strconv.Itoa(rank) }

const addrPrefix = "goshmem-pe/"

// resolve maps a PID of Address(rank) to rank's transport actor, or to
// the local actor when rank is this PE.
func (l *Lane) resolve(pid *actor.PID) (actor.Process, bool) {
	rest, ok := strings.CutPrefix(pid.Address, addrPrefix)
	if !ok {
		return nil, false
	}
	rank, err := strconv.Atoi(rest)
	select {
	case <-l.joined:
	default:
		return nil, false
	}
	if err != nil || rank < 0 || rank >= len(l.peers) {
		return nil, false
	}
	if rank == l.me {
		return l.root.ActorSystem().ProcessRegistry.GetLocal(pid.Id)
	}
	return remote{l: l, rank: rank}, true
}

// remote is the Process of an actor on another PE's process.
type remote struct {
	l    *Lane
	rank int
}

// SendUserMessage frames the message for the lane. A sender on this
// process becomes the frame's reply name; system messages (watch, stop)
// do not cross processes.
func (r remote) SendUserMessage(pid *actor.PID, m any) {
	reply := ""
	if env, ok := m.(*actor.MessageEnvelope); ok {
		m = env.Message
		if s := env.Sender; s != nil && (s.Address == r.l.root.ActorSystem().Address() || s.Address == "nonhost") {
			reply = s.Id
		}
	}
	r.l.send(r.rank, pid.Id, reply, m)
}

func (remote) SendSystemMessage(*actor.PID, any) {}
func (remote) Stop(*actor.PID)                   {}
