package lane

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/goshmem/shmem/actors"
)

// Send delivers msg, a message of package actors, to the actor named
// target on rank's process, and reports whether the lane took it: false
// once the lane closes, for a rank outside the world, or a message that
// does not encode. Taking it is not delivery: a peer that fails first
// never gets it. Messages to one rank arrive in the order sent.
func (l *Lane) Send(rank int, target string, msg any) bool {
	return l.send(rank, target, "", msg)
}

// PID returns the PID of the actor target on rank's process.
func PID(rank int, target string) *actor.PID { return actor.NewPID(Address(rank), target) }

func (l *Lane) send(rank int, target, reply string, msg any) bool {
	select {
	case <-l.joined:
	default:
		return false
	}
	if rank < 0 || rank >= len(l.peers) || l.isClosing() {
		return false
	}
	if rank == l.me {
		l.root.Send(actor.NewPID(l.root.ActorSystem().Address(), target), msg)
		return true
	}
	b, err := encodeMessage(l.me, rank, target, reply, msg)
	if err != nil {
		l.log.Warn("control lane: message not sent", "to", rank, "target", target, "err", err)
		return false
	}
	l.root.Send(l.peers[rank], evSend{&out{b: b, name: typeName(msg)}})
	return true
}

func typeName(m any) string {
	switch m.(type) {
	case *actors.Gather:
		return "Gather"
	case *actors.GatherReply:
		return "GatherReply"
	case *actors.PEFailed:
		return "PEFailed"
	case *actors.GlobalExit:
		return "GlobalExit"
	}
	return "message"
}

// relaysFrom reports whether a frame from origin may arrive through peer:
// this side's route to origin relays through peer, or is not set yet.
func (l *Lane) relaysFrom(peer, origin int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.routes[origin] {
	case RoleRelay:
		return l.via[origin] == peer
	case RoleUnknown:
		return true
	}
	return false
}

func (l *Lane) isClosing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closing
}

// deliver handles a message frame that arrived from peer: for this PE it
// goes to its target actor, decoded; for another PE it is relayed, once.
//
// A frame's from must be true, or a PE of the job could send a PEFailed or
// a GlobalExit in another's name: a frame this PE relays must come from its
// origin (from == peer), and a frame for this PE must come either straight
// from its origin or through the PE this side's route to the origin relays
// through (Routes is symmetric: that relay is the one the origin uses, and
// it relays only frames of its direct peer). Before the routes are set
// (start-up) a frame relayed in another PE's name cannot be checked and is
// taken; the routes between rank 0 and every PE are direct and set at Join,
// so frames naming rank 0, or sent to it, are checked from the start. A
// relay is trusted for the frames it relays.
func (l *Lane) deliver(peer int, f *frame) {
	if f.to != l.me {
		if f.from != peer || f.to >= len(l.peers) || f.to == peer {
			l.log.Warn("control lane: dropped a frame to relay", "from", f.from, "to", f.to, "via", peer)
			return
		}
		l.root.Send(l.peers[f.to], evSend{&out{b: appendFrame(nil, f), name: "relayed", hop: true}})
		return
	}
	if f.from >= len(l.peers) || f.from == l.me {
		l.log.Warn("control lane: dropped a frame from an unknown PE", "from", f.from, "via", peer)
		return
	}
	if f.from != peer && !l.relaysFrom(peer, f.from) {
		l.log.Warn("control lane: dropped a frame naming another PE as its sender", "from", f.from, "via", peer)
		return
	}
	msg, err := actors.Decode(f.payload)
	if err != nil {
		l.log.Warn("control lane: dropped a message", "from", f.from, "err", err)
		return
	}
	target := actor.NewPID(l.root.ActorSystem().Address(), f.target)
	if f.reply == "" {
		l.root.Send(target, msg)
		return
	}
	l.root.RequestWithCustomSender(target, msg, PID(f.from, f.reply))
}
