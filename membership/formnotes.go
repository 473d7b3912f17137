package membership

import (
	"fmt"
	"slices"
	"strings"
)

// maxNoted bounds the processes one note of Form's error names.
const maxNoted = 3

// refusal is a process this one refused, as logged: why, and its address.
type refusal struct{ reason, addr string }

// noteJoin records the outcome of one join attempt for joinNoteLocked,
// and reports whether a join ever succeeded.
func (n *node) noteJoin(err error) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err == nil {
		n.joinedOnce = true
	} else {
		n.joinErr = oneLine(err)
	}
	return n.joinedOnce
}

// oneLine flattens memberlist's join error, a list ("1 error occurred:\n\t*
// failed to join ...\n\n"), into the line Form's error can quote.
func oneLine(err error) string {
	s := strings.TrimSpace(err.Error())
	if _, rest, ok := strings.Cut(s, "error occurred:"); ok {
		s = strings.TrimPrefix(strings.TrimSpace(rest), "* ")
	}
	return strings.Join(strings.Fields(s), " ")
}

// joinNoteLocked is what Form's error adds when no join ever succeeded: the
// seeds this process could not reach (not started, another program on the
// port, a firewall) and memberlist's last word on it. A process that others
// joined is not alone, so this is said only with an incomplete view.
func (n *node) joinNoteLocked() string {
	if n.joinedOnce || n.joinErr == "" {
		return ""
	}
	return fmt.Sprintf("; no join with a seed (%s) or peer succeeded, the last: %s",
		strings.Join(n.otherSeedsLocked(), ", "), n.joinErr)
}

// refusedNoteLocked is what Form's error adds when this process refused
// others of its job's gossip (another world size, version or job, or a
// world already full): they are usually the processes it misses, and the
// log that said so may not be where the operator looks.
func (n *node) refusedNoteLocked() string {
	var notes []string
	for name, r := range n.rejected {
		if _, ok := n.peers[name]; !ok {
			notes = append(notes, fmt.Sprintf("%s at %s (%s)", name, r.addr, r.reason))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	slices.Sort(notes)
	more := ""
	if len(notes) > maxNoted {
		more = fmt.Sprintf(" and %d more", len(notes)-maxNoted)
		notes = notes[:maxNoted]
	}
	return fmt.Sprintf("; refused %s%s", strings.Join(notes, ", "), more)
}

// deadNoteLocked names the members of table, other than its leader (whose
// state the error gives already), that gossip reports dead: a member killed
// before the table was sealed holds its place in it, so no table seals.
func (n *node) deadNoteLocked(table []candidate) string {
	var dead []string
	for r, c := range table {
		if r > 0 && n.down[c.Name] {
			dead = append(dead, fmt.Sprintf("rank %d (%s at %s)", r, c.Name, c.Addr))
		}
	}
	if len(dead) == 0 {
		return ""
	}
	return "; gossip reports dead " + strings.Join(dead, ", ")
}
