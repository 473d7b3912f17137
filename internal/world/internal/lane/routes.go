package lane

// Route says how this PE's control messages reach one peer.
type Route struct {
	Role Role
	Via  int // the relaying PE, for RoleRelay
}

// Routes returns how PE me reaches every PE (its own entry is the zero
// Route), given reach[a][b]: a could connect to b at start-up. Every PE
// computes the same plan from the same reach, so exactly one side of a
// pair dials:
//   - rank 0 and any PE: the PE dials rank 0. Start-up requires that each
//     can connect to the other, and this link exists before reach is
//     known: the route agreement itself travels on it.
//   - two other PEs: the higher rank dials if it can connect, else the
//     lower if it can; if neither can, messages go through the lowest PE
//     linked to both (rank 0 always is).
func Routes(reach [][]bool, me int) []Route {
	n := len(reach)
	linked := func(a, b int) bool { return a == 0 || b == 0 || reach[a][b] || reach[b][a] }
	out := make([]Route, n)
	for p := range out {
		if p == me {
			continue
		}
		lo, hi := min(me, p), max(me, p)
		switch {
		case lo == 0 || reach[hi][lo]:
			out[p].Role = dialer(me == hi)
		case reach[lo][hi]:
			out[p].Role = dialer(me == lo)
		default:
			for v := 0; v < n; v++ {
				if v != me && v != p && linked(me, v) && linked(v, p) {
					out[p] = Route{Role: RoleRelay, Via: v}
					break
				}
			}
		}
	}
	return out
}

func dialer(me bool) Role {
	if me {
		return RoleDial
	}
	return RoleAccept
}
