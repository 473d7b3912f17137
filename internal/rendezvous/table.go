package rendezvous

import (
	"fmt"
	"strconv"
	"strings"
)

// table is the server's pure state: which ranks have contributed which
// records, and the first registered rank that died before the world
// formed. The first registration of a rank wins.
type table struct {
	records [][]byte
	have    []bool
	n       int
	failed  int // a rank that left before the world formed, or -1
}

func newTable(npes int) *table {
	return &table{records: make([][]byte, npes), have: make([]bool, npes), failed: -1}
}

// leave records that registered rank's connection dropped. Before the
// world formed that ends the exchange: the first such rank is the one the
// verdict names, and leave reports true for it. Once the world formed, or
// after the first, a departure changes nothing.
func (t *table) leave(rank int) bool {
	if t.failed >= 0 || t.full() || rank < 0 || rank >= len(t.have) || !t.have[rank] {
		return false
	}
	t.failed = rank
	return true
}

// collecting reports whether the exchange still waits for ranks to form
// the world: neither full nor failed.
func (t *table) collecting() bool { return t.failed < 0 && !t.full() }

// offer registers rank's record, or says why it is refused.
func (t *table) offer(rank, npes uint32, record []byte) error {
	if int64(npes) != int64(len(t.have)) {
		return fmt.Errorf("rank %d says the world has %d PEs, rank 0 says %d", rank, npes, len(t.have))
	}
	if int64(rank) >= int64(len(t.have)) {
		return fmt.Errorf("rank %d is out of range 0..%d", rank, len(t.have)-1)
	}
	if t.have[rank] {
		return fmt.Errorf("rank %d has already arrived (duplicate rank)", rank)
	}
	t.have[rank] = true
	t.records[rank] = record
	t.n++
	return nil
}

func (t *table) full() bool { return t.n == len(t.have) }

func (t *table) missing() []int {
	var m []int
	for r, ok := range t.have {
		if !ok {
			m = append(m, r)
		}
	}
	return m
}

// rankList renders ranks as "rank 2" or "ranks 2,5", eliding past 32.
func rankList(ranks []int) string {
	const show = 32
	var b strings.Builder
	if len(ranks) == 1 {
		b.WriteString("rank ")
	} else {
		b.WriteString("ranks ")
	}
	for i, r := range ranks {
		if i == show {
			fmt.Fprintf(&b, ",... (%d more)", len(ranks)-show)
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(r))
	}
	return b.String()
}
