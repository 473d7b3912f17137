package sim

import (
	"fmt"
	"strings"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// leftLocked is the error of PE rank, whose function returned nil while
// its PE still held locks (a SetLock or TestLock without its ClearLock),
// or nil when it holds none. No later SetLock on such a lock could take
// it; the program passes only when no other PE happens to want the lock
// after, so Run reports it in every schedule, not just in those.
func leftLocked(c *core.PE, rank int) error {
	held := c.HeldLocks()
	if len(held) == 0 {
		return nil
	}
	offs := make([]string, len(held))
	for i, off := range held {
		offs[i] = fmt.Sprintf("%#x", off)
	}
	what := "the lock at heap offset "
	if len(held) > 1 {
		what = "the locks at heap offsets "
	}
	return errs.New("SetLock", rank, 0, errs.ErrInvalidArgument,
		"PE %d returned holding %s%s of PE 0: a SetLock or TestLock without its ClearLock, and a later SetLock would wait forever",
		rank, what, strings.Join(offs, ", "))
}
