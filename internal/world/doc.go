// Package world forms a world whose PEs are separate processes, on one
// host or many, and hands core.Start (the PE runtime) the result. The root package's Init
// calls Join; the in-process simulator does not come here.
//
// # Start-up stages
//
// Join runs four stages in order (join.go, stages.go). Each returns the
// closer of what it built; when a stage fails, the closers of the stages
// that ran run in reverse, and Finalize runs them all the same way
// (core.Config.Release).
//
//  1. exchange: open what this PE's record advertises, the control lane's
//     listener (with the actor system and a coordinator), the data listener
//     and, with the fabric provider, the fabric node and the heap segment it
//     registers; then exchange records with every PE through the unique ID's
//     rendezvous or through gossip (which also assigns ranks).
//  2. routes: start the control lane's links to rank 0, probe every peer's
//     control address, agree on everyone's probes through rank 0's
//     coordinator, plan the data routes (reach.go: direct, or relayed through
//     the lowest PE both sides reach) and link the lane's other pairs.
//  3. providers: the heap and a data path to every PE: shared memory on
//     this host (udma), TCP (transport/rdma) or the fabric to other hosts,
//     relayed paths where the plan says.
//  4. control: start the PE on those paths, wired to the control plane
//     (below), and run Init's closing agreement.
//
// # Who owns what
//
// The joiner owns the stages' products until Finalize. The control type
// (control.go) owns this process's actor system, its end of the control
// lane and the failure wiring; the lane (package internal/world/internal/lane) owns
// its listener, connections and a transport actor per peer; the PE actor
// (package pe, driven by internal/core) owns the PE's failure and exit
// state, which every notice reaches through it; the data-path nodes own their connections, and only hear of a
// failed peer (PeerFailed) to end what is pending on it.
//
// # The control lane
//
// Cross-process actor messages (the msgpack messages of package actors:
// agreement rounds with rank 0's coordinator, failure notices, GlobalExit)
// travel on one connection per pair of PEs beside the data lanes: TLS 1.3
// by default, the job-secret handshake before any frame (also with TLS
// off), bounded length-prefixed frames decoded only into the concrete
// message types. A PID whose address is lane.Address(rank) reaches rank's
// actors, so agreements are ordinary protoactor requests. Every PE dials
// rank 0; of two other PEs the higher rank dials if it can, else the
// lower; a pair where neither can has its messages relayed by a PE linked
// to both (rank 0 always is). Rank 0 and every PE must connect to each
// other (rankZeroRule).
//
// # Failure detection
//
// A PE's failure is detected by whoever holds a link to it: the link ends
// without the bye a closing PE sends, or stays silent for 3 s while
// heartbeats go every 500 ms (a host cut off without a reset, a killed
// host), or never comes up within 10 s; gossip worlds add memberlist's
// detection. A PE whose own ticks come late (it was stopped) restarts the
// silence clock rather than blame its peers. A detection becomes a
// PEFailed notice to this PE's own actor, behind whatever the peer sent
// before (so a GlobalExit that preceded the end of its link wins). When the
// PE records a failure it fails the data paths to that PE, closes the
// lane's link to it and floods the notice (flood.go) so that PEs without a
// link to the detector hear too; rank 0's coordinator aborts the
// agreements the failed PE belonged to.
//
// # Exit
//
// A GlobalExit notice goes to every PE over the lane (rank 0 passes it on
// once more). The caller and rank 0 wait until the others have left before
// their process ends; every PE but the caller closes its lane with a bye
// first (also on a link the peer was still bringing up), so no PE takes its
// end for a failure. A data operation that sees an exiting
// peer's connection drop before the notice arrives waits briefly for it
// (core's settle), so it reports the exit, not a failure. The wait ends at
// once when a link to that peer, this PE's or another's, ends without a
// bye: every PE but the caller says bye, and the caller ends only after
// the others have gone, its notice on the link ahead of its end; so the
// peer failed (the lane's loss reaches the PE actor behind the link's
// messages, and the flood forwards it, as actors.PEFailed.Link).
package world
