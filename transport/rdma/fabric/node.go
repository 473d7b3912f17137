//go:build cgo && goshmem_fabric

package fabric

/*
#include <stdlib.h>
#include "gf.h"
*/
import "C"

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Available reports whether this build has the libfabric provider.
const Available = true

// Node is one PE's libfabric endpoint: its registered heap, its completion
// queue and counters, and one Path per connected peer. Open creates it;
// Close (or Engine().Close) releases it.
type Node struct {
	cfg    Config
	me     atomic.Int64 // this node's rank: cfg.Rank, or what SetRank set
	log    *slog.Logger
	c      *C.gf_node // C memory: libfabric keeps pointers into the contexts it owns
	prov   string
	inject int // largest put sent with FI_INJECT (no slot, no copy)
	maxMsg int // largest single transfer; bigger ones are split
	self   []byte
	// copied out of n.c so that nothing reads C memory after Close
	bounceDesc unsafe.Pointer
	mrLocal    bool
	rmaEvent   bool // remote writes are counted (FI_RMA_EVENT)
	atom       atomicTable
	eng        engine

	// life guards the C objects: every call into libfabric holds it for
	// reading; Close takes it for writing before it tears them down.
	life   sync.RWMutex
	closed atomic.Bool
	done   chan struct{} // closed by Close: wakes slot waiters
	polled chan struct{} // closed when the progress goroutine has stopped
	// pollMu is held by the progress goroutine while it reads the
	// completion queue, which progresses every endpoint bound to it:
	// closing a stream's endpoint meanwhile crashes rxm (stream.go).
	pollMu sync.Mutex

	mu    sync.Mutex
	paths []*path // by rank; nil until Connect
	// gone is, by rank, the error of a peer marked failed (PeerFailed) or
	// departed (PeerLeft): a path or stream path made later fails with it.
	gone []error
	// anyFailed is the first PeerFailed's error: a post refused for a full
	// queue gives up with it (see path.again).
	anyFailed atomic.Pointer[error]
	watched   chan struct{} // closed when the OnRemoteWrite watcher has stopped; nil without one

	slots []slot
	free  chan int32

	growMu  sync.Mutex         // serializes GrowHeap
	heapLen int                // registered heap bytes; guarded by mu
	heapMRs []*C.struct_fid_mr // later heap registrations (GrowHeap); guarded by growMu, closed by teardown

	keys atomic.Uint64 // requested keys for local registrations

	// sleeps counts the counter waits that asked libfabric to sleep
	// (slept); polling notes that they poll instead (gf_cntr_wait).
	sleeps  atomic.Uint64
	polling atomic.Bool

	// streams are the engines of the node's streams whose endpoints are
	// open: live ones, and destroyed ones that still had operations in
	// flight (closed with the node). Guarded by mu.
	streams map[*engine]struct{}
	idle    []*C.gf_ep // endpoints of destroyed streams, for the next (streamEP); guarded by mu
}

// Open creates a node: it picks a provider, opens the endpoint, registers
// cfg.Heap and cfg.Statics and starts the progress goroutine. Errors wrap
// errs.ErrInvalidArgument (bad config) or errs.ErrBootstrap (no provider,
// or libfabric refused a step; the message names the step and has
// fi_strerror's text). A refusal whose libfabric code is an errno value
// matches that syscall.Errno too: syscall.EADDRINUSE when cfg.Port is
// taken.
func Open(cfg Config) (*Node, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: c, log: c.Logger, done: make(chan struct{}), polled: make(chan struct{}),
		paths: make([]*path, c.NPEs), gone: make([]error, c.NPEs), heapLen: len(c.Heap),
		streams: map[*engine]struct{}{}}
	n.me.Store(int64(c.Rank))
	n.c = (*C.gf_node)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_node{}))))
	if n.c == nil {
		return nil, errs.New("fabric.Open", c.Rank, errs.NoPE, errs.ErrOutOfMemory, "allocating the node")
	}
	cstr := func(s string) *C.char {
		if s == "" {
			return nil
		}
		return C.CString(s)
	}
	service := ""
	if c.Port > 0 {
		service = strconv.Itoa(c.Port)
	}
	prov, dom, node, svc := cstr(c.Provider), cstr(c.Domain), cstr(c.Node), cstr(service)
	defer C.free(unsafe.Pointer(prov))
	defer C.free(unsafe.Pointer(dom))
	defer C.free(unsafe.Pointer(node))
	defer C.free(unsafe.Pointer(svc))
	var heap unsafe.Pointer
	if len(c.Heap) > 0 {
		heap = unsafe.Pointer(unsafe.SliceData(c.Heap)) // not Go memory: see Config.Heap
	}
	var statics unsafe.Pointer
	if len(c.Statics) > 0 {
		statics = unsafe.Pointer(unsafe.SliceData(c.Statics)) // not Go memory either: see Config.Statics
	}
	if rc := C.gf_open(n.c, prov, dom, node, svc, heap, C.size_t(len(c.Heap)), statics, C.size_t(len(c.Statics)),
		C.size_t(c.BounceSize), C.int(c.Slots)); rc != 0 {
		step := "?"
		if n.c.step != nil {
			step = C.GoString(n.c.step)
		}
		C.free(unsafe.Pointer(n.c))
		at := ""
		if c.Port > 0 {
			at = fmt.Sprintf(", port %d", c.Port)
		}
		return nil, errs.New("fabric.Open", c.Rank, errs.NoPE, fiErr{errs.ErrBootstrap, int(rc)},
			"%s (provider %q, domain %q, node %q%s): %s", step, c.Provider, c.Domain, c.Node, at, fiStrerror(int(rc)))
	}
	n.eng = engine{n: n, ep: &n.c.main}
	n.prov = C.GoString(C.gf_prov(n.c))
	n.inject = int(C.gf_inject_size(n.c))
	n.maxMsg = int(min(uint64(C.gf_max_msg(n.c)), 1<<30))
	n.atom = queryAtomics(n.c)
	n.bounceDesc, n.mrLocal, n.rmaEvent = n.c.bounce_desc, n.c.mr_local != 0, n.c.rma_event != 0
	n.initSlots()
	if err := n.initAddress(); err != nil {
		n.teardown()
		return nil, err
	}
	n.log.Debug("fabric: node open", "rank", c.Rank, "provider", n.prov, "inject", n.inject, "mr_local", n.mrLocal, "rma_event", n.rmaEvent)
	if n.c.cntr32 != 0 {
		n.polling.Store(true) // polling from the start, for this reason, not the one slept logs
		n.log.Debug("fabric: the provider's counters are 32 bits wide: counts compared modulo 2^32, counters polled", "rank", c.Rank, "provider", n.prov)
	}
	if n.c.no_ip_port != 0 {
		n.log.Debug("fabric: the provider's address is not an IP one: Port ignored", "rank", c.Rank, "provider", n.prov, "port", c.Port)
	}
	go n.progress()
	return n, nil
}

// rank is this node's rank, as errors and its Address name it.
func (n *Node) rank() int { return int(n.me.Load()) }

// SetRank gives the node its rank when it was opened before ranks were
// known (gossip start-up registers the heap before the exchange that
// assigns them): its Address and errors name r from then on. It must come
// before Connect; it fails with errs.ErrInvalidArgument for a rank outside
// the world or once a peer is connected.
func (n *Node) SetRank(r int) error {
	if r < 0 || r >= n.cfg.NPEs {
		return errs.New("fabric.SetRank", n.rank(), errs.NoPE, errs.ErrInvalidArgument, "rank %d of %d PEs", r, n.cfg.NPEs)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.paths {
		if p != nil {
			return errs.New("fabric.SetRank", n.rank(), p.peer, errs.ErrInvalidArgument, "PE %d is connected already", p.peer)
		}
	}
	a, err := DecodeAddress(n.self)
	if err != nil {
		return err
	}
	a.Rank = r
	b, err := a.MarshalBinary()
	if err != nil {
		return err
	}
	n.me.Store(int64(r))
	n.self = b
	return nil
}

func (n *Node) initAddress() error {
	var buf [MaxEPName]byte
	l := C.size_t(len(buf))
	if rc := C.gf_getname(n.c, unsafe.Pointer(&buf[0]), &l); rc != 0 {
		return errs.New("fabric.Open", n.rank(), errs.NoPE, errs.ErrBootstrap, "fi_getname: %s", fiStrerror(int(rc)))
	}
	a := Address{Rank: n.rank(), Provider: n.prov, HeapSize: uint64(len(n.cfg.Heap)),
		Key: uint64(C.gf_heap_key(n.c)), EP: buf[:l]}
	if len(n.cfg.Heap) > 0 {
		a.HeapBase = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(n.cfg.Heap))))
	}
	if len(n.cfg.Statics) > 0 {
		a.StaticsBase = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(n.cfg.Statics))))
		a.StaticsSize, a.StaticsKey = uint64(len(n.cfg.Statics)), uint64(C.gf_statics_key(n.c))
	}
	b, err := a.MarshalBinary()
	if err != nil {
		return err
	}
	n.self = b
	return nil
}

// Provider is the libfabric provider the node runs on, e.g. "tcp;ofi_rxm".
func (n *Node) Provider() string { return n.prov }

// Address returns the bytes a peer passes to Connect to reach this node.
func (n *Node) Address() []byte {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]byte(nil), n.self...)
}

// Connect makes the peers reachable: peers[r] is rank r's Address (nil for a
// rank this node will not talk to; this node's own entry may be included).
// Each rank may be connected once. The bytes are validated; a bad entry is
// refused with errs.ErrInvalidArgument naming its rank, and leaves the
// ranks before it connected.
func (n *Node) Connect(peers [][]byte) error {
	if len(peers) > n.cfg.NPEs {
		return errs.New("fabric.Connect", n.rank(), errs.NoPE, errs.ErrInvalidArgument, "%d addresses for %d PEs", len(peers), n.cfg.NPEs)
	}
	for r, b := range peers {
		if b == nil {
			continue
		}
		if err := n.connect(r, b); err != nil {
			return err
		}
	}
	return nil
}

func (n *Node) connect(r int, b []byte) error {
	bad := func(sentinel error, format string, args ...any) error {
		return errs.New("fabric.Connect", n.rank(), r, sentinel, format, args...)
	}
	a, err := DecodeAddress(b)
	if err != nil {
		return bad(errs.ErrInvalidArgument, "%v", err)
	}
	if a.Rank != r {
		return bad(errs.ErrInvalidArgument, "address of rank %d at index %d", a.Rank, r)
	}
	if a.Provider != n.prov {
		return bad(errs.ErrInvalidArgument, "peer runs provider %q, this node %q", a.Provider, n.prov)
	}
	n.life.RLock()
	defer n.life.RUnlock()
	if n.closed.Load() {
		return bad(errs.ErrFinalized, "node closed")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.paths[r] != nil {
		return bad(errs.ErrInvalidArgument, "rank %d already connected", r)
	}
	var fa C.fi_addr_t
	if rc := C.gf_av_insert(n.c, unsafe.Pointer(&a.EP[0]), &fa); rc != 0 {
		return bad(errs.ErrBootstrap, "fi_av_insert: %s", fiStrerror(int(rc)))
	}
	p := &path{n: n, e: &n.eng, peer: r, fa: fa, win: &window{}, dead: make(chan struct{}),
		st: staticsWin{size: a.StaticsSize, key: a.StaticsKey}}
	p.win.key.Store(a.Key)
	p.win.size.Store(int64(a.HeapSize))
	if n.c.virt_addr != 0 {
		p.base, p.st.base = a.HeapBase, a.StaticsBase
	}
	if err := n.gone[r]; err != nil {
		p.failWith(err)
	}
	n.paths[r] = p
	return nil
}

// Path returns the path to peer; it fails with errs.ErrInvalidArgument for
// a rank outside the world or one not connected yet.
func (n *Node) Path(peer int) (transport.Path, error) {
	if peer < 0 || peer >= n.cfg.NPEs {
		return nil, errs.New("fabric.Path", n.rank(), peer, errs.ErrInvalidArgument, "no PE %d in a world of %d", peer, n.cfg.NPEs)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.paths[peer]; p != nil {
		return p, nil
	}
	return nil, errs.New("fabric.Path", n.rank(), peer, errs.ErrInvalidArgument, "PE %d not connected", peer)
}

// Engine returns the engine that fences and quiets the node's paths (not
// its streams' paths: each stream is an engine of its own, NewStream).
func (n *Node) Engine() transport.Engine { return &n.eng }

// PeerFailed marks peer dead: its path's later operations return
// errs.ErrPEFailed naming it, and so do the blocking operations waiting
// for a completion from it (Get, fetching atomics, large Puts), at once;
// their completion slots stay reserved until libfabric completes them or
// Close. Its pending GetNBIs no longer hold Quiet up and never fill their
// buffers. Reads straight into a caller's buffer larger than BounceSize are
// the exception: they wait for their completion (the provider fails them
// when the connection breaks), OpTimeout or Close, since the NIC may write
// that buffer until then.
func (n *Node) PeerFailed(peer int) {
	err := errs.New("PeerFailed", n.rank(), peer, errs.ErrPEFailed, "PE %d marked failed", peer)
	if n.markGone(peer, err) {
		n.anyFailed.CompareAndSwap(nil, &err)
	}
}

// PeerLeft marks peer departed: its PE called Finalize and closes (or
// closed) its endpoint, so what is in flight to it may never complete.
// The provider does not always say so: rxm fails a fetching atomic
// in flight to a peer whose connection ended only at OpTimeout. Its
// path's operations then end as after PeerFailed (errs.ErrPEFailed, "PE n
// called Finalize"), but the departure is not a failure: a post refused
// for a full queue does not give up for it.
func (n *Node) PeerLeft(peer int) {
	n.markGone(peer, errs.New("PeerLeft", n.rank(), peer, errs.ErrPEFailed, "PE %d called Finalize: its endpoint is closing", peer))
}

// markGone fails peer's paths, the node's and its streams', with err,
// and reports whether peer is a rank of the world. The first mark wins.
func (n *Node) markGone(peer int, err error) bool {
	if peer < 0 || peer >= n.cfg.NPEs {
		return false
	}
	n.mu.Lock()
	if n.gone[peer] == nil {
		n.gone[peer] = err
	}
	hit := n.streamPaths(peer)
	if p := n.paths[peer]; p != nil {
		hit = append(hit, p)
	}
	n.mu.Unlock()
	for _, p := range hit {
		p.failWith(err)
	}
	return true
}

// Close stops the progress goroutine and the remote-write watcher, fails every waiting operation with
// errs.ErrFinalized and releases the endpoint, the registrations and the C
// memory. Later operations return errs.ErrFinalized.
func (n *Node) Close() error {
	if !n.closed.CompareAndSwap(false, true) {
		return nil
	}
	close(n.done)
	n.life.Lock() // no caller is inside libfabric after this
	C.gf_wake(n.c)
	<-n.polled
	// The endpoint goes first: a waiter woken by failSlots may reuse its
	// buffer at once (a big Get's dst), and the pinned caller buffers are
	// unpinned there, so libfabric must be done with them.
	C.gf_close_ep(&n.c.main)
	n.mu.Lock()
	for e := range n.streams {
		C.gf_close_ep(e.ep)
	}
	for _, ep := range n.idle {
		C.gf_close_ep(ep)
	}
	n.mu.Unlock()
	n.failSlots()
	n.teardown()
	n.life.Unlock()
	// The watcher may be waiting for the read side to see the close.
	n.mu.Lock()
	w := n.watched
	n.mu.Unlock()
	if w != nil {
		<-w
	}
	return nil
}

// teardown releases the C side; the caller guarantees nobody uses it.
func (n *Node) teardown() {
	n.closeGrowth()
	n.mu.Lock()
	for e := range n.streams {
		freeEP(e.ep)
		delete(n.streams, e)
	}
	for _, ep := range n.idle {
		freeEP(ep)
	}
	n.idle = nil
	n.mu.Unlock()
	C.gf_close(n.c)
	C.free(unsafe.Pointer(n.c))
	n.c = nil
}

// enter is the read side of life: it fails once the node is closing.
func (n *Node) enter(op string, peer int) error {
	n.life.RLock()
	if n.closed.Load() {
		n.life.RUnlock()
		return errs.New(op, n.rank(), peer, errs.ErrFinalized, "node closed")
	}
	return nil
}

func (n *Node) exit() { n.life.RUnlock() }

// slept follows a counter wait with a timeout (gf_cntr_wait), inside the
// node: it counts the wait and, the first time the node's waits poll
// because the provider's do not sleep, says so in the log.
func (n *Node) slept() {
	n.sleeps.Add(1)
	if n.c.cntr_polls != 0 && n.polling.CompareAndSwap(false, true) {
		n.log.Debug("fabric: the provider's counter wait returned before its timeout: polling counters instead (the sockets provider of libfabric 1.10 to 1.21 does not sleep)",
			"rank", n.rank(), "provider", n.prov)
	}
}

func fiStrerror(rc int) string {
	if rc < 0 {
		rc = -rc
	}
	return C.GoString(C.fi_strerror(C.int(rc)))
}
