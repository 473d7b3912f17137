package heap

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// applyMsg asks the heap actor to apply one agreed Request. It never leaves
// the process: the agreement that precedes it is what crosses PEs.
type applyMsg struct{ req Request }

// Props returns the props of the actor that owns h's allocator: every change
// to h goes through its mailbox, one at a time.
func Props(h *Heap) *actor.Props {
	return actor.PropsFromFunc(func(ctx actor.Context) {
		if m, ok := ctx.Message().(*applyMsg); ok {
			ctx.Respond(h.Apply(m.req))
		}
	})
}

// ApplyVia sends req to the heap actor pid and waits for its Result.
func ApplyVia(root *actor.RootContext, pid *actor.PID, req Request, timeout time.Duration) (Result, error) {
	res, err := root.RequestFuture(pid, &applyMsg{req: req}, timeout).Result()
	if err != nil {
		return Result{}, err
	}
	return res.(Result), nil
}
