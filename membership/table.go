package membership

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// candidate is a process of this job as one view knows it.
type candidate struct {
	Name string
	Addr string // memberlist gossip address, host:port
	Hdr  header
}

// earlier orders candidates for admission: by start stamp, then name. Every
// view orders the same candidates the same way, so all views that see the
// same processes select the same npes of them.
func earlier(a, b *candidate) bool {
	if a.Hdr.Incarnation != b.Hdr.Incarnation {
		return a.Hdr.Incarnation < b.Hdr.Incarnation
	}
	return a.Name < b.Name
}

// countEarlier is how many of cands come before c (c itself excluded by name).
func countEarlier(cands []candidate, c *candidate) int {
	n := 0
	for i := range cands {
		if cands[i].Name != c.Name && earlier(&cands[i], c) {
			n++
		}
	}
	return n
}

// selectMembers returns the npes earliest candidates, or nil when there are
// fewer than npes.
func selectMembers(cands []candidate, npes int) []candidate {
	if len(cands) < npes {
		return nil
	}
	s := slices.Clone(cands)
	slices.SortFunc(s, func(a, b candidate) int {
		if earlier(&a, &b) {
			return -1
		}
		if earlier(&b, &a) {
			return 1
		}
		return 0
	})
	return s[:npes]
}

// hintsArePermutation reports whether every member gives a rank hint and the
// hints are exactly 0..len(members)-1.
func hintsArePermutation(members []candidate) bool {
	seen := make([]bool, len(members))
	for i := range members {
		h := members[i].Hdr.Hint
		if h < 0 || h >= len(members) || seen[h] {
			return false
		}
		seen[h] = true
	}
	return true
}

// assignRanks returns members in rank order: by hint when the hints are a
// permutation, else by name.
func assignRanks(members []candidate) []candidate {
	t := slices.Clone(members)
	if hintsArePermutation(t) {
		slices.SortFunc(t, func(a, b candidate) int { return cmp.Compare(a.Hdr.Hint, b.Hdr.Hint) })
	} else {
		slices.SortFunc(t, func(a, b candidate) int { return cmp.Compare(a.Name, b.Name) })
	}
	return t
}

// tableHash identifies a rank table: job, version, size and, per rank, the
// name, address and application record. Two views seal only on equal hashes.
func tableHash(jobID, version string, table []candidate) [32]byte {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte(jobID))
	field([]byte(version))
	binary.LittleEndian.PutUint64(n[:], uint64(len(table)))
	h.Write(n[:])
	for i := range table {
		field([]byte(table[i].Name))
		field([]byte(table[i].Addr))
		field(table[i].Hdr.Meta)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// missingRanks names the ranks no seen candidate fills, when that is known:
// with hints from every candidate seen they are the unclaimed hints.
// Otherwise ranks follow names and are known only once everyone is seen,
// so known is false.
func missingRanks(cands []candidate, npes int) (missing []int, known bool) {
	claimed := make([]bool, npes)
	for i := range cands {
		h := cands[i].Hdr.Hint
		if h < 0 || h >= npes {
			return nil, false
		}
		claimed[h] = true
	}
	for r, ok := range claimed {
		if !ok {
			missing = append(missing, r)
		}
	}
	return missing, len(cands) > 0
}
