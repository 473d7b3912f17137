package coll

import (
	"math/bits"
	"sync"
)

// MaxTeams is how many teams, TeamWorld and TeamShared included, a PE can
// have alive at once. Every team needs its own sync words and scratch in the
// symmetric heap at the same offset on every member, so the slots are carved
// out once at start-up; 32 keeps the pool near 2 MiB for worlds up to a few
// hundred PEs (a slot is dominated by its scratch) while leaving room for
// the row, column and node teams real codes build. It also fits a 64-bit
// free-slot bitmap, which is what creation agrees on.
const MaxTeams = 32

// ScratchBytes is each team's staging area for reductions. Payloads larger
// than it are pipelined through it in chunks, so memory use per team stays
// bounded whatever the message size.
const ScratchBytes = 64 << 10

// Pool is a PE's bounded set of team slots: regions of its symmetric heap,
// at the same offsets on every PE, each holding one team's sync words and
// scratch. A slot is free on a PE when no team of that PE uses it; free
// slots hold zeroed sync words, so a team starts with clean counters.
type Pool struct {
	mu       sync.Mutex
	base     uint64
	slotSize uint64
	slots    int
	world    int
	used     uint64 // bit i: slot i is taken on this PE
}

// SlotBytes returns the bytes of one slot for a world of npes PEs.
func SlotBytes(npes int) int64 {
	return int64(8*slotWords(npes)) + ScratchBytes
}

// PoolSlots returns how many slots a pool gets in a heap of heapSize bytes:
// MaxTeams unless that would take more than a quarter of the heap, and at
// least 2 (TeamWorld and TeamShared). Every PE of a world has the same heap
// size, so every PE computes the same number.
func PoolSlots(npes int, heapSize int64) int {
	n := int(heapSize / 4 / SlotBytes(npes))
	return max(2, min(MaxTeams, n))
}

// NewPool manages slots slots of SlotBytes(npes) each at heap offset base,
// which the caller reserved (zeroed) at the same offset on every PE.
func NewPool(base uint64, npes, slots int) *Pool {
	return &Pool{base: base, slotSize: uint64(SlotBytes(npes)), slots: slots, world: npes}
}

// slotWords is the number of 8-byte sync words at the start of a slot:
// a set of dissemination words for each of Barrier, Sync and Destroy (see
// syncSet), entry signal words and two parities of entry data (three
// words a round), then a signal word and an acknowledgement word per world
// PE and a count word per world PE (Collect's sizes), then the member's
// operation word, its left word (see ident.go), the lock it holds, the
// member that gave the team up and the operation it gave up (see
// giveup.go), and the arguments of its current and next collective (see
// args.go).
func slotWords(npes int) int {
	r := SyncWords(npes)
	return int(syncSets)*r + r + 2*3*r + 3*npes + 5 + 2*argWords
}

// layout is where a slot's parts live in the heap.
type layout struct {
	psync, entrySig, entryData, sig, ack, counts, op, left, held, quit, quitOp, args, scratch uint64
	rounds                                                                                    int
}

func (p *Pool) layout(slot int) layout {
	r := SyncWords(p.world)
	b := p.base + uint64(slot)*p.slotSize
	l := layout{rounds: r, psync: b}
	l.entrySig = l.psync + uint64(8*int(syncSets)*r)
	l.entryData = l.entrySig + uint64(8*r)
	l.sig = l.entryData + uint64(8*6*r)
	l.ack = l.sig + uint64(8*p.world)
	l.counts = l.ack + uint64(8*p.world)
	l.op = l.counts + uint64(8*p.world)
	l.left = l.op + 8
	l.held = l.left + 8
	l.quit = l.held + 8
	l.quitOp = l.quit + 8
	l.args = l.quitOp + 8
	l.scratch = l.args + 2*8*argWords
	return l
}

// free returns the bitmap of the slots free on this PE.
func (p *Pool) free() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ^p.used & (1<<p.slots - 1)
}

// take marks slot used; it reports false if it was not free.
func (p *Pool) take(slot int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slot < 0 || slot >= p.slots || p.used&(1<<slot) != 0 {
		return false
	}
	p.used |= 1 << slot
	return true
}

// release zeroes slot's sync words in mem (this PE's heap) and frees it.
func (p *Pool) release(mem []byte, slot int) {
	l := p.layout(slot)
	clear(mem[l.psync:l.scratch])
	p.mu.Lock()
	defer p.mu.Unlock()
	p.used &^= 1 << slot
}

// InUse returns how many slots are taken on this PE.
func (p *Pool) InUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bits.OnesCount64(p.used)
}

// Slots returns the pool's capacity.
func (p *Pool) Slots() int { return p.slots }

// HeldWord returns the heap offset of the word in TeamWorld's slot where a
// PE records the lock it holds (the lock's offset + 1, 0 for none), which
// waiters for that lock read when they wait long.
func (p *Pool) HeldWord() uint64 { return p.layout(0).held }
