package coll

import (
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// Sync returns when every member has called Sync as many times as the
// caller. It is a dissemination barrier: in round k each member adds one to
// word k of the member 2^k ahead and waits for its own word k to reach the
// number of barriers so far, so log2(n) rounds and no reset between
// barriers: the words only grow, which makes back-to-back barriers safe.
// Sync does not complete outstanding puts; Barrier does.
func (t *Team) Sync() error { return t.SyncAs("Sync") }

// syncSet picks the dissemination words of a synchronizing operation.
// Barrier, Sync and Destroy count in words of their own: were they to share
// words, a member in BarrierAll and one in SyncAll would complete each
// other and report success; apart, both wait, and their peer checks find
// the mismatch (see ident.go).
type syncSet int

const (
	syncBarrier syncSet = iota
	syncSync
	syncDestroy
	syncSets // the number of sets
)

// sync is Sync with t.mu held, counting in set's words.
func (t *Team) sync(op string, set syncSet) error {
	if len(t.ahead) == 0 {
		return nil // one member
	}
	t.epochs[set]++
	epoch := t.epochs[set]
	base := t.l.psync + uint64(8*t.l.rounds)*uint64(set)
	for k, peer := range t.ahead {
		word := base + uint64(8*k)
		path, err := t.rt.Path(op, peer)
		if err != nil {
			return t.orPoisoned(op, word, err)
		}
		if s, ok := path.(signaler); ok {
			if err := t.signalAndWait(op, s, word, epoch); err != nil {
				return err
			}
			continue
		}
		if err := path.AtomicPost(transport.AtomicFetchAdd, 8, word, 1); err != nil {
			return t.orPoisoned(op, word, err)
		}
		if err := t.waitWord(op, word, epoch); err != nil {
			return err
		}
	}
	return nil
}

// Barrier completes the caller's outstanding puts (Quiet) and then Syncs.
func (t *Team) Barrier() error { return t.BarrierAs("Barrier") }

// SyncAs is Sync reported as op (SyncAll).
func (t *Team) SyncAs(op string) error {
	if t == nil {
		return t.usable(op)
	}
	return t.synchronize(op, team.KindSync, syncSync)
}

// BarrierAs is Barrier reported as op (BarrierAll): every failure inside
// it, the Quiet's included, names the call the user made.
func (t *Team) BarrierAs(op string) error {
	if t == nil {
		return t.usable(op)
	}
	if err := t.rt.Quiet(); err != nil {
		return errs.As(op, t.rt.MyPE(), err)
	}
	return t.synchronize(op, team.KindBarrier, syncBarrier)
}

// synchronize locks t, numbers op (of kind k) and runs the dissemination
// in set's words: SyncAs and BarrierAs past their own steps.
func (t *Team) synchronize(op string, k team.Kind, set syncSet) error {
	if t.timer != nil {
		return t.timedSynchronize(op, k, set)
	}
	// No defers: with core.BarrierAll's they were an eighth of a
	// barrier's instructions outside its wait. Nothing in here panics but
	// a bug; the simulated network, which ends a PE by panicking inside
	// its calls, times team operations, so it takes timedSynchronize.
	t.mu.Lock()
	err := t.usable(op)
	if err == nil {
		err = t.number(op, k)
	}
	if err == nil {
		if err = t.sync(op, set); err != nil {
			err = errs.As(op, t.rt.MyPE(), err)
		}
	}
	t.mu.Unlock()
	return err
}

// timedSynchronize is synchronize telling the runtime's OpTimer when the
// operation starts and returns, whatever way it returns.
func (t *Team) timedSynchronize(op string, k team.Kind, set syncSet) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(op); err != nil {
		return err
	}
	if err := t.number(op, k); err != nil {
		return err
	}
	t.timeOp(op, false)
	defer t.timeOp(op, true)
	if err := t.sync(op, set); err != nil {
		return errs.As(op, t.rt.MyPE(), err)
	}
	return nil
}
