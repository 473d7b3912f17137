package world

import (
	"reflect"
	"testing"
)

func allReach(n int) [][]bool {
	r := make([][]bool, n)
	for a := range r {
		r[a] = make([]bool, n)
		for b := range r[a] {
			r[a][b] = true
		}
	}
	return r
}

func everyNetwork(a, b int) bool { return true }

func TestPlanRoutesRelaysUnreachablePairs(t *testing.T) {
	// 1 and 2 cannot connect; 0 reaches both and is the lowest relay.
	reach := allReach(4)
	reach[1][2] = false
	via, err := planRoutes(reach, nil, everyNetwork)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{-1, -1, -1, -1}, {-1, -1, 0, -1}, {-1, 0, -1, -1}, {-1, -1, -1, -1}}
	if !reflect.DeepEqual(via, want) {
		t.Fatalf("via = %v, want %v", via, want)
	}
	// Relays must themselves be direct: 0 no longer relays for 1 and 2.
	reach[0][2] = false
	via, err = planRoutes(reach, nil, everyNetwork)
	if err != nil {
		t.Fatal(err)
	}
	if via[1][2] != 3 || via[2][1] != 3 || via[0][2] != 3 {
		t.Fatalf("via = %v, want 1<->2 and 0<->2 through 3", via)
	}
}

func TestPlanRoutesPolicyAndSharedMemory(t *testing.T) {
	pol, err := parseRelayPolicy(" 0-2:1 ,", 3)
	if err != nil {
		t.Fatal(err)
	}
	sameHost := func(a, b int) bool { return false }
	via, err := planRoutes(allReach(3), pol, sameHost)
	if err != nil {
		t.Fatal(err)
	}
	if via[0][2] != 1 || via[2][0] != 1 || via[0][1] != -1 || via[1][2] != -1 {
		t.Fatalf("via = %v", via)
	}
	// Shared-memory pairs need no reach.
	reach := allReach(2)
	reach[0][1] = false
	if via, err := planRoutes(reach, nil, sameHost); err != nil || via[0][1] != -1 {
		t.Fatalf("shared pair: %v %v", via, err)
	}
}

func TestPlanRoutesNoRelay(t *testing.T) {
	reach := allReach(2)
	reach[0][1] = false
	if _, err := planRoutes(reach, nil, everyNetwork); err == nil {
		t.Fatal("two PEs that cannot connect got a plan")
	}
}

func TestParseRelayPolicyRefusesBadInput(t *testing.T) {
	for _, s := range []string{"0-1", "0:1", "0-1:1", "0-0:1", "a-1:2", "0-1:9", "0-1-2:3", "-1-2:0"} {
		if _, err := parseRelayPolicy(s, 4); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}
