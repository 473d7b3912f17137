package shmem

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// WithStatics makes mem a second symmetric region of the PE, beside its
// heap: memory the process owns that every PE of the world has at the
// same size and layout. PE.Statics returns a Sym over it. It exists for
// foreign-language bindings: the C API passes a C program's globals and
// statics (its .data and .bss), which OpenSHMEM makes symmetric.
//
// Peers reach the region over the network: over TCP (directly or through
// a relay), where each PE's data listener checks every request against
// its own region before it touches it, and over the libfabric provider,
// which registers the region beside the heap and checks every access
// against the peer's registered size before it posts it. A PE reaches
// its own region too. Same-host peers whose heaps are mapped do not reach
// it: a binding maps same-host peers' copies itself (the C API does).
// Worlds other than the multi-process one (the simulator, WithBackend, a
// one-PE world without a launcher) ignore it.
// mem must stay valid, at the same addresses, until Finalize returns.
func WithStatics(mem []byte) Option { return func(o *options) { o.statics = mem } }

// WithStaticsLayout gives a digest of what lies where in the statics
// region (WithStatics): two executables whose regions have the same size
// may still place their variables differently, and a put into one PE's
// variable would then land in another variable of its peer. Init refuses
// a world in which two PEs' digests differ, naming the PE; 0 (the
// default) means unknown and is not compared. The C API digests the
// executable's symbols in the region: their names, offsets and sizes.
func WithStaticsLayout(digest uint64) Option { return func(o *options) { o.staticsLayout = digest } }

// staticsSlot is the heap table slot of the Sym over the statics region:
// past every table, so the heap's checks refuse it and only the ways that
// know it (PE.Statics) reach it.
const staticsSlot = badSlot - 1

// Statics returns the PE's statics region (WithStatics) as a Sym of its
// bytes, or false without one. Put, Get, their NBI forms, P, G, the
// atomics, PutSignal (data and signal each in the heap or the region)
// and the locks accept it and its slices (SymAs too); calls that touch
// only the caller's own memory (Local, the waits, SignalFetch) and the
// collectives refuse it with ErrInvalidArgument: the binding reads its
// own region itself.
func (p *PE) Statics() (Sym[byte], bool) {
	if p.zero() {
		return Sym[byte]{}, false
	}
	n := p.c.StaticsSize()
	if n == 0 {
		return Sym[byte]{}, false
	}
	return Sym[byte]{world: p.c.WorldID(), slot: staticsSlot, off: transport.StaticsBase, n: n}, true
}

// staticsTarget is checkedTarget for a Sym over the statics region.
func (s Sym[T]) staticsTarget(p *PE, op string, pe, first, count int) (transport.Path, uint64, error) {
	if s.world != p.c.WorldID() || count < 0 || first < 0 || first > s.n || count > s.n-first {
		return nil, 0, s.refuse(p, op, pe, first, count)
	}
	path, base, err := p.c.StaticsPath(op, pe)
	if err != nil {
		return nil, 0, err
	}
	return path, base + s.off - transport.StaticsBase + uint64(first)*elemSize[T](), nil
}

// oneRegionPath checks, for a put-with-signal whose data and signal lie
// one in the heap and one in the statics region, that one path reaches
// both on pe: a network path does, while this PE reaches its own heap and
// its own region by two.
func oneRegionPath(p *PE, op string, pe int) error {
	heapPath, err := p.c.Path(op, pe)
	if err != nil {
		return err
	}
	staticsPath, _, err := p.c.StaticsPath(op, pe)
	if err != nil {
		return err
	}
	if heapPath != staticsPath {
		return errs.New(op, p.MyPE(), pe, errs.ErrInvalidArgument,
			"the data and the signal lie one in the heap and one in the statics region, which no one path to PE %d reaches", pe)
	}
	return nil
}
