package membership

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// lostLocked returns the peers memberlist reports dead that hold a place
// in this view's table, in name order: fewer than npes processes are live,
// and the dead peer is among the npes earliest seen. Such a peer was a
// member of the job that died before the table was sealed; no table can
// seal without it unless a live process takes its place (one restarted
// in its place, refused as one too many while the dead one held it).
func (n *node) lostLocked() []candidate {
	if len(n.down) == 0 || len(n.liveLocked()) >= n.cfg.NPEs {
		return nil
	}
	view := n.viewLocked()
	var lost []candidate
	for _, c := range selectMembers(view, min(len(view), n.cfg.NPEs)) {
		if n.down[c.Name] {
			lost = append(lost, c)
		}
	}
	slices.SortFunc(lost, func(a, b candidate) int { return strings.Compare(a.Name, b.Name) })
	return lost
}

// lostError is Form's error when members died before sealing and nobody
// took their places within grace: it names them (with their rank when
// this view computed a table), and how many processes this view saw.
func (n *node) lostError(lost []candidate, grace time.Duration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	table := n.history[n.current]
	who := make([]string, len(lost))
	for i, c := range lost {
		who[i] = fmt.Sprintf("%s at %s", c.Name, c.Addr)
		if r := slices.IndexFunc(table, func(t candidate) bool { return t.Name == c.Name }); r >= 0 {
			who[i] = fmt.Sprintf("rank %d (%s)", r, who[i])
		}
	}
	view := n.viewLocked()
	return errs.New("Form", errs.NoPE, errs.NoPE, fmt.Errorf("%w: %w", errs.ErrBootstrap, errs.ErrPEFailed),
		"job %q: %s joined and then died before the world was sealed (gossip declared it dead, and no process took its place within %v); saw %d of %d processes (%s)",
		n.cfg.JobID, strings.Join(who, ", "), grace, len(view), n.cfg.NPEs, names(view))
}
