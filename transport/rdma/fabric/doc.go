// Package fabric is goshmem's libfabric provider for the between-hosts data
// path: the same transport.Path and transport.Engine as package rdma's TCP
// provider, carried by RDMA operations of the NIC instead of framed
// messages. On a host with an RDMA NIC libfabric's verbs provider runs it
// (verbs;ofi_rxm); elsewhere the tcp (tcp;ofi_rxm) or sockets providers run
// the same code, which is how its tests run on machines without RDMA.
//
// Build: the provider needs cgo and libfabric (Debian: libfabric-dev) and is
// compiled only with the build tag goshmem_fabric
// (go build -tags goshmem_fabric). Without the tag the package holds only
// the Config and Address types and Available is false, so the default build
// never needs libfabric.
//
// # Start-up
//
// Open picks a provider offering reliable-datagram endpoints with RMA and
// atomics (Config.Provider/Domain/Node narrow the choice), registers the
// symmetric heap, and the statics region if there is one (Config.Statics,
// reached at offsets from transport.StaticsBase), with fi_mr_reg and starts
// one progress goroutine. Address returns the bytes a peer needs (endpoint
// name, and address, size and remote key of the heap and of the statics
// region); Connect takes every peer's bytes, validates them (they are
// outside input; DecodeAddress is fuzzed) and inserts them into the address
// vector. The world bootstrap carries these bytes like any other blob.
//
// # Data path
//
//   - Put: up to the provider's inject size with fi_writemsg(FI_INJECT), no
//     copy on our side and no completion context; up to Config.BounceSize
//     copied into a registered bounce buffer and posted asynchronously;
//     larger ones pinned (runtime.Pinner; registered when the provider wants
//     FI_MR_LOCAL) and waited for. Put returns when src is reusable.
//   - Get: fi_readmsg into a bounce buffer (copied to dst by the progress
//     goroutine) or, for large reads, straight into the pinned dst; GetNBI is
//     the same without waiting, completed by Quiet.
//   - Atomic: fi_fetch_atomic / fi_compare_atomic on FI_UINT32/FI_UINT64;
//     AtomicPost: fi_atomic with FI_INJECT. An op the provider lacks for a
//     width (fi_query_atomic) falls back to a compare-and-swap loop; without
//     compare-and-swap the op fails with errs.ErrInvalidArgument naming the
//     provider. tcp;ofi_rxm implements all of them in software at the
//     target; verbs implements fetch-add and compare-swap on 8-byte words in
//     the NIC, and rxm emulates the rest.
//   - PutSignal: the data, then a wait until every write of the node is
//     delivered, then the signal as an 8-byte atomic write or add; it relies
//     on no provider ordering flag, at the price of one round trip.
//   - Ptr is nil: the peer's memory is reached only through the NIC.
//
// Every operation that needs a completion context takes a slot: a C-side
// fi_context2 and a bounce buffer allocated at Open, whose index moves
// through a free channel, so the hot path allocates nothing.
//
// # Completion and ordering
//
// Writes are posted with FI_DELIVERY_COMPLETE and counted by the endpoint's
// write counter, reads and fetching atomics by its read counter (fi_cntr).
// Quiet waits until both counters have counted every operation posted
// (bounded by Config.OpTimeout: errs.ErrTimeout names the peers with
// outstanding writes) and every GetNBI is copied out. Counter waits sleep
// in fi_cntr_wait, 100 ms at most each; where that returns at once instead
// (the sockets provider of libfabric 1.10 to 1.21, whose deadline is on
// the wrong clock), a node polls its counters with naps of up to 1 ms.
// Fence is quiet-before-next: it opens a new epoch, and the first write to
// a path in a new epoch first waits for the engine's writes if that path
// has any outstanding. Gets and fetching atomics likewise wait for earlier
// writes to their peer, so a PE reads its own puts.
//
// # Streams (contexts)
//
// The node's engine is a transport.Streamer: each stream (an OpenSHMEM
// context) is an endpoint of its own bound to counters of its own, so its
// Quiet and Fence count only its own operations and, on rxm, it has its
// own connections; a Quiet on an idle stream returns at once while another
// stream, or the node, waits for a stopped peer. Streams share the node's
// address vector, completion queue, progress goroutine, slots and heap
// registrations. A destroyed stream's endpoint is not closed but kept for
// the next stream (closing one of several endpoints bound to a completion
// queue crashes tcp;ofi_rxm 1.17 in its next fi_cq_sread), so a node holds
// as many stream endpoints as it had contexts alive at once.
//
// # A heap that grows
//
// Config.Heap's capacity is the reservation the heap may grow into. Once
// the caller has mapped more of it, GrowHeap registers the heap again,
// whole, under a new key, and Address carries the new size and key; a
// peer moves its paths to them with UpdatePeers. One registration per
// growth covering everything so far means no transfer spans two
// registrations and a grown part costs what the first does; the older
// registrations stay until Close, since a peer may still have operations
// in flight under an older key. Registering the whole reservation up front
// would spare the exchange, and tcp and sockets accept unmapped memory,
// but verbs pins what it registers and refuses it, and a software
// provider would fault writing a part not yet mapped.
//
// # Failure
//
// Errors wrap the internal/errs sentinels and name the operation and both
// PEs; libfabric failures carry fi_strerror's text. A failed completion or
// an expired wait fails the path (later operations return the error at
// once); PeerFailed does the same from outside. A path's failure also ends
// the blocking operations waiting on it (Get, fetching atomics, large
// Puts: errs.ErrPEFailed after PeerFailed) without their completions: the
// slot is abandoned, and reused only once libfabric completes it or Close
// has closed the endpoint, so the late completion writes only the slot's
// bounce buffer, never a Get's dst. A GetNBI from a failed peer is skipped
// the same way: Quiet stops waiting for it, and its late completion is not
// copied to dst (Node.copyOut). A read larger than BounceSize, which
// the NIC writes into dst directly, is not abandoned: it waits for its
// completion (the provider fails it when the connection breaks),
// OpTimeout or Close. Close closes the endpoint first, then fails the
// waiting operations with errs.ErrFinalized.
//
// # Waking the target
//
// An RDMA write bypasses the target's CPU, so nothing rings the target's
// transport.Bell. Where the provider counts remote writes (FI_RMA_EVENT:
// sockets, udp;ofi_rxd) Open asks for it, without changing the provider or
// domain chosen, and OnRemoteWrite rings after writes and atomics land.
// verbs and tcp;ofi_rxm do not count them (RemoteWriteEvents is false):
// the world then bounds each sleep of a waiting PE instead (world's
// fabricPoll), as RDMA OpenSHMEMs poll memory.
//
// # World start-up
//
// package world opens a node when SHMEM_RDMA_PROVIDER=fabric (world.Config
// Provider) and carries Address in the PE's start-up record; PEs on other
// hosts then get these paths, same-host PEs keep shared memory and relayed
// pairs the TCP transport.
package fabric
