package membership

import (
	"slices"
	"testing"
)

func cand(name string, inc int64, hint int) candidate {
	return candidate{Name: name, Addr: "127.0.0.1:1", Hdr: header{Incarnation: inc, Hint: hint, NPEs: 3, Meta: []byte(name)}}
}

func tableNames(t []candidate) []string {
	var s []string
	for _, c := range t {
		s = append(s, c.Name)
	}
	return s
}

func TestSelectMembersByStartThenName(t *testing.T) {
	cands := []candidate{cand("d", 5, -1), cand("c", 1, -1), cand("a", 9, -1), cand("b", 1, -1)}
	if got := tableNames(selectMembers(cands, 3)); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Fatalf("selected %v, want [b c d]", got)
	}
	if selectMembers(cands, 5) != nil {
		t.Fatal("selected a table from too few candidates")
	}
	if n := countEarlier(cands, &cands[2]); n != 3 {
		t.Fatalf("countEarlier(a) = %d, want 3", n)
	}
}

func TestAssignRanks(t *testing.T) {
	hinted := []candidate{cand("x", 1, 2), cand("y", 2, 0), cand("z", 3, 1)}
	if got := tableNames(assignRanks(hinted)); !slices.Equal(got, []string{"y", "z", "x"}) {
		t.Fatalf("by hint: %v, want [y z x]", got)
	}
	dup := []candidate{cand("x", 1, 1), cand("y", 2, 1), cand("z", 3, 0)}
	if got := tableNames(assignRanks(dup)); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Fatalf("duplicate hints must fall back to names: %v", got)
	}
	partial := []candidate{cand("z", 1, 0), cand("y", 2, -1), cand("x", 3, 2)}
	if got := tableNames(assignRanks(partial)); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Fatalf("partial hints must fall back to names: %v", got)
	}
}

func TestTableHash(t *testing.T) {
	a := []candidate{cand("x", 1, -1), cand("y", 2, -1)}
	b := []candidate{cand("y", 2, -1), cand("x", 1, -1)}
	if tableHash("j", "v", a) == tableHash("j", "v", b) {
		t.Fatal("rank order does not change the hash")
	}
	if tableHash("j", "v", a) == tableHash("j", "w", a) || tableHash("j", "v", a) == tableHash("k", "v", a) {
		t.Fatal("job or version does not change the hash")
	}
	c := slices.Clone(a)
	c[1].Hdr.Meta = []byte("other")
	if tableHash("j", "v", a) == tableHash("j", "v", c) {
		t.Fatal("the application record does not change the hash")
	}
	if tableHash("j", "v", a) != tableHash("j", "v", slices.Clone(a)) {
		t.Fatal("hash is not deterministic")
	}
}

func TestMissingRanks(t *testing.T) {
	if got, known := missingRanks([]candidate{cand("a", 1, 0), cand("b", 1, 3)}, 4); !known || !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("hinted: %v %v, want [1 2] known", got, known)
	}
	if got, known := missingRanks([]candidate{cand("a", 1, 0), cand("b", 1, -1)}, 4); known {
		t.Fatalf("partly hinted: %v known, want unknown", got)
	}
}

func TestGossipKey(t *testing.T) {
	k := gossipKey([]byte("s"))
	if len(k) != 32 {
		t.Fatalf("key is %d bytes, want 32 (AES-256)", len(k))
	}
	if string(k) == string(gossipKey([]byte("t"))) {
		t.Fatal("different secrets give the same key")
	}
}
