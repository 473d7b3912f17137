// Package lane is goshmem's control lane: the one authenticated connection
// per pair of PEs that carries cross-process actor messages (the msgpack
// messages of package actors) between the protoactor actor systems of a
// world's processes, beside the data lanes of the network transport.
//
// What it guarantees:
//   - No byte from an unauthenticated peer is parsed beyond the bounded
//     handshake: a connection runs TLS 1.3 (unless the job turned it off)
//     and then internal/secure's job-secret handshake before a frame is
//     read, with TLS off too. At most Config.MaxUnauthenticated connections
//     per listener are in their handshake at once; a newer one closes the
//     oldest (internal/admit), telling it admit.Busy if this side had not
//     answered it yet, so idle strangers cannot lock the PEs out.
//   - Every frame is length-prefixed and bounded (MaxFrame), its header is
//     checked before anything is allocated for it, and its payload decodes
//     only into the concrete types of package actors (actors.Decode).
//   - Messages reach local actors as the decoded Go values
//     (*actors.PEFailed, ...), with a sender PID that routes a reply back
//     over the lane (ctx.Respond and RequestFuture work across processes).
//   - Messages on one link arrive in the order they were sent; a peer that
//     closes its end gracefully sends a bye first, so its departure is not
//     taken for a failure; a link the peer is still bringing up when this
//     side closes is waited for, and gets the bye too.
//
// Who owns what: a transport actor per peer (peer.go) owns that peer's
// link: it dials or waits to be dialed, runs the heartbeat that detects a
// silent peer, relays through a third PE when the two cannot connect, and
// closes. Its decisions are a pure step function (step.go), tested without
// sockets from the scenarios in testdata/. The Lane (lane.go) owns the
// listener, the actors and the resolver that maps the PIDs of other
// processes (Address(rank)) to their transport actor.
//
// One connection serves a pair, dialed by one side only (Route): the
// simplest arrangement in which both sides notice a loss at once and a
// message and the connection's end cannot be reordered.
package lane
