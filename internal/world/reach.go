package world

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/errs"
)

// EnvRelayVia forces relaying: "a-c:b,..." makes every PE send traffic
// between PEs a and c through PE b, as if a and c had no direct path (a
// policy that forbids it). Every PE must be given the same value. Only
// data is relayed: control messages between rank 0 and any PE go direct
// (see rankZeroRule), and failure notices are flooded (flood.go).
const EnvRelayVia = "SHMEM_RELAY_VIA"

// probeTimeout bounds each reachability probe at start-up. A peer with no
// route fails at once; one whose packets are dropped costs the whole
// timeout, paid once and in parallel with the other probes.
const probeTimeout = 2 * time.Second

// direct is a route's via when no relay is needed.
const direct = -1

// parseRelayPolicy parses EnvRelayVia into via[{min(a,c), max(a,c)}] = b.
func parseRelayPolicy(s string, npes int) (map[[2]int]int, error) {
	pol := map[[2]int]int{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		pair, viaStr, ok := strings.Cut(item, ":")
		aStr, cStr, ok2 := strings.Cut(pair, "-")
		if !ok || !ok2 {
			return nil, fmt.Errorf("%s item %q: want a-c:b", EnvRelayVia, item)
		}
		var v [3]int
		for i, f := range []string{aStr, cStr, viaStr} {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 || n >= npes {
				return nil, fmt.Errorf("%s item %q: %q is not a PE of 0..%d", EnvRelayVia, item, f, npes-1)
			}
			v[i] = n
		}
		if v[0] == v[1] || v[2] == v[0] || v[2] == v[1] {
			return nil, fmt.Errorf("%s item %q: three different PEs needed", EnvRelayVia, item)
		}
		pol[pairKey(v[0], v[1])] = v[2]
	}
	return pol, nil
}

func pairKey(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }

// planRoutes decides, for every ordered pair of PEs, whether a's data
// path to b is direct or relayed, and through whom. reach[a][b] says a
// could connect to b; network(a, b) says a's path to b is a network one
// (shared-memory paths need no reach). A pair is relayed when the policy
// says so or when either side cannot connect to the other; the relay is the
// lowest-ranked PE that both connect to directly. Every PE computes the
// same plan from the same inputs.
func planRoutes(reach [][]bool, policy map[[2]int]int, network func(a, b int) bool) ([][]int, error) {
	n := len(reach)
	ok := func(a, b int) bool {
		if _, forced := policy[pairKey(a, b)]; forced {
			return false
		}
		return !network(a, b) || reach[a][b] && reach[b][a]
	}
	via := make([][]int, n)
	for a := range via {
		via[a] = make([]int, n)
		for b := range via[a] {
			via[a][b] = direct
			if a == b {
				continue
			}
			if v, forced := policy[pairKey(a, b)]; forced {
				via[a][b] = v
				continue
			}
			if ok(a, b) {
				continue
			}
			found := false
			for v := 0; v < n && !found; v++ {
				if v != a && v != b && ok(a, v) && ok(v, b) {
					via[a][b], found = v, true
				}
			}
			if !found {
				return nil, fmt.Errorf("PEs %d and %d cannot connect to each other and no PE connects to both", a, b)
			}
		}
	}
	return via, nil
}

// probe reports which PEs this one can open a TCP connection to, probing
// the control address of every peer that need is true for (the others
// count as reached). The connection is closed at once.
func probe(recs []record, need func(r int) bool) []bool {
	reached := make([]bool, len(recs))
	var wg sync.WaitGroup
	for r, rec := range recs {
		if !need(r) {
			reached[r] = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", rec.Control, probeTimeout)
			if err == nil {
				c.Close()
				reached[r] = true
			}
		}()
	}
	wg.Wait()
	return reached
}

// routes probes the peers, agrees on everyone's probes through rank 0's
// coordinator, and returns the plan and the agreed reach matrix
// (reach[a][b]: PE a can connect to PE b). Rank 0 and every PE must
// connect to each other (checkRankZero).
func (j *joiner) routes(recs []record) (via [][]int, reach [][]bool, err error) {
	c := &j.cfg
	policy, err := parseRelayPolicy(c.RelayVia, c.NPEs)
	if err != nil {
		return nil, nil, j.fail(errs.ErrInvalidArgument, "%v", err)
	}
	network := func(a, b int) bool { return c.Network || recs[a].Host != recs[b].Host }
	reached := probe(recs, func(r int) bool { return r != c.Rank && network(c.Rank, r) })
	missing := unreachedRanks(reached)
	if c.Rank != 0 && len(missing) > 0 && missing[0] == 0 {
		return nil, nil, j.fail(errs.ErrBootstrap, "cannot connect to rank 0's control plane at %s: "+rankZeroRule, recs[0].Control)
	}
	if c.Rank == 0 && len(missing) > 0 {
		return nil, nil, j.abortRoutes(recs, missing)
	}
	bits := make([]byte, (c.NPEs+7)/8)
	for r, ok := range reached {
		if ok {
			bits[r/8] |= 1 << (r % 8)
		}
	}
	g := &actors.Gather{Domain: "reach", Seq: 1, Rank: c.Rank, N: c.NPEs, Members: worldRanks(c.NPEs), Payload: bits}
	all, err := j.gatherAtZero(g)
	if err != nil {
		return nil, nil, j.routesFailed(recs, err)
	}
	reach = make([][]bool, c.NPEs)
	for a, b := range all {
		if len(b) != len(bits) {
			return nil, nil, j.fail(errs.ErrBootstrap, "PE %d sent a %d-byte reach set, want %d", a, len(b), len(bits))
		}
		reach[a] = make([]bool, c.NPEs)
		for r := range reach[a] {
			reach[a][r] = b[r/8]&(1<<(r%8)) != 0
		}
	}
	if via, err = planRoutes(reach, policy, network); err != nil {
		return nil, nil, j.fail(errs.ErrBootstrap, "%v", err)
	}
	return via, reach, nil
}
