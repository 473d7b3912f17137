package coll

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// gatedPath holds the data signals of a collective (those to the slot's
// signal words, not the entry's) until gate closes, after telling held.
type gatedPath struct {
	transport.Path
	sig, ack uint64 // the signal words' range in the slot
	held     func()
	gate     <-chan struct{}
}

func (g gatedPath) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, op transport.SignalOp) error {
	if sigOff >= g.sig && sigOff < g.ack {
		g.held()
		<-g.gate
	}
	return g.Path.PutSignal(off, src, sigOff, value, op)
}

// TestGivenUpInDataPhaseFailsEveryMember: every member of a Broadcast
// (root 0, four members) has passed the entry when PE 3 gives up its wait
// for its parent's data (its operation timeout); the root's data is held
// until then. The root, which waits on nobody after the entry, and the
// members that wait on others than PE 3, must fail naming PE 3 as the
// members of a barrier it gave up do: the collective did not complete for
// PE 3. (The root used to return nil, and the others nil or an error
// depending on when their peer check ran.)
func TestGivenUpInDataPhaseFailsEveryMember(t *testing.T) {
	const n, quitter = 4, 3
	w := newFakeWorld(t, n)
	teams := w.worlds(t)
	l := teams[0].l
	gate := make(chan struct{})
	var inData sync.WaitGroup // the others, in the data phase
	inData.Add(n - 1)
	onces := make([]sync.Once, n)
	arrived := func(r int) func() { return func() { onces[r].Do(inData.Done) } }
	for j := 1; j < n; j++ {
		w.rts[0].paths[j] = gatedPath{Path: w.rts[0].paths[j], sig: l.sig, ack: l.ack, held: arrived(0), gate: gate}
	}
	for r := 1; r < n; r++ {
		rt := w.rts[r]
		rt.waitHook = func(op string, off uint64) error {
			if off < l.sig || off >= l.ack {
				return nil // the entry
			}
			if r != quitter {
				arrived(r)()
				return nil
			}
			inData.Wait()
			return errs.New(op, r, errs.NoPE, errs.ErrTimeout, "operation timeout (test)")
		}
	}
	src, dst := w.dataOff(), w.dataOff()+4096
	got := w.each(func(r int) error {
		a := Args{Kind: KindBroadcast, Type: 1, Elem: 8, Count: 8, Root: 0, DstOff: dst, DstLen: 8}
		err := teams[r].Broadcast(a, dst, src, 64)
		if r == quitter {
			close(gate)
		}
		return err
	})
	if !errors.Is(got[quitter], errs.ErrTimeout) {
		t.Errorf("PE %d (gives up): %v, want ErrTimeout", quitter, got[quitter])
	}
	for r, err := range got {
		if r == quitter {
			continue
		}
		var e *errs.Error
		if !errors.Is(err, errs.ErrPEFailed) || !errors.As(err, &e) || e.Target != quitter ||
			!strings.Contains(err.Error(), "PE 3 gave up operation 1 (Broadcast) of team world") {
			t.Errorf("PE %d: %v, want ErrPEFailed naming PE 3 and the Broadcast it gave up", r, err)
		}
	}
}
