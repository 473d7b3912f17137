package coll

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goshmem/shmem/transport"
)

// A member publishes the Args of each collective it enters in its own
// team slot (local stores), so that when the entry finds that members
// disagree, each can read the others' (remote reads, only then) and say
// which member passed what. The entry completes only after every member
// has published. A member that failed the entry returns and may enter the
// next collective while another still reads its Args, so they are
// double-buffered by sequence parity, as the entry data is: it cannot get
// further, since that next entry waits for every member, so the words
// read are this collective's.

// argWords is the words of published Args: the ten fields and whether the
// member rejected its own arguments.
const argWords = 11

var argNames = [...]string{"collective", "element type", "element size", "count", "root", "operator",
	"destination offset", "destination length", "destination stride", "source stride", "own argument check"}

func (a *Args) words() [argWords]uint64 {
	bad := uint64(0)
	if a.Err != nil {
		bad = 1
	}
	return [argWords]uint64{uint64(a.Kind), a.Type, uint64(a.Elem), uint64(a.Count), uint64(a.Root), uint64(a.Op),
		a.DstOff, uint64(a.DstLen), uint64(a.DStride), uint64(a.SStride), bad}
}

// argsAt is where a member publishes the Args of collective seq.
func (t *Team) argsAt(seq uint64) uint64 { return t.l.args + (seq&1)*8*argWords }

// publishArgs stores a, the Args of collective seq, where peers read them.
func (t *Team) publishArgs(seq uint64, a *Args) {
	local, at := t.local, t.argsAt(seq)
	for i, w := range a.words() {
		transport.ApplySignal(local, at+uint64(8*i), w, transport.SignalSet)
	}
}

// argsDiffer reads every member's published Args and says, for the first
// field in which they differ, which members passed what:
// "count: PE 2 passed 6, PEs 0-1, 3 passed 8". Collect's counts may differ
// and are not compared. When it cannot tell (a peer cannot be read, or
// the difference is in what the Args hash and not in the words), it says
// so.
func (t *Team) argsDiffer(op string, seq uint64, a *Args) string {
	const unknown = "which arguments differ could not be read"
	at := t.argsAt(seq)
	all := make([][argWords]uint64, len(t.members))
	for j, w := range t.members {
		if j == t.me {
			all[j] = a.words()
			continue
		}
		for i := range argWords {
			v, err := t.peek(op, w, at+uint64(8*i))
			if err != nil {
				return unknown + ": " + err.Error()
			}
			all[j][i] = v
		}
	}
	for i := range argWords {
		if i == 3 && Kind(all[t.me][0]) == KindCollect {
			continue
		}
		var order []uint64
		by := map[uint64][]int{}
		for j := range all {
			v := all[j][i]
			if _, ok := by[v]; !ok {
				order = append(order, v)
			}
			by[v] = append(by[v], t.members[j])
		}
		if len(order) < 2 {
			continue
		}
		parts := make([]string, len(order))
		for k, v := range order {
			val := fmt.Sprint(int64(v))
			if i == 0 && int(v) < len(kinds) {
				val = kinds[v].String()
			}
			switch i {
			case 1:
				val = typeName(v)
			case 5:
				val = opName(v)
			case 6:
				val = fmt.Sprintf("%#x", v) // as the deadlock report and other errors give heap offsets
			}
			if i == argWords-1 {
				val = map[uint64]string{0: "accepted its arguments", 1: "rejected its arguments"}[v]
				parts[k] = peNames(by[v]) + " " + val
				continue
			}
			parts[k] = peNames(by[v]) + " passed " + val
		}
		return argNames[i] + ": " + strings.Join(parts, ", ")
	}
	return unknown
}

// typeName names an Args.Type as the root package codes it (its typeCode):
// a reflect.Kind, Float16 (1<<8), BFloat16 (2<<8), or a complex pair of
// parts (3<<8 | the part's code).
func typeName(v uint64) string {
	switch {
	case v == 1<<8:
		return "Float16"
	case v == 2<<8:
		return "BFloat16"
	case v>>8 == 3:
		return "complex of " + typeName(v&0xff)
	case v < 1<<8:
		return reflect.Kind(v).String()
	}
	return fmt.Sprint(v)
}

// opNames names an Args.Op as the root package numbers its Op (OpSum = 1
// through OpXor = 7), so that a mismatch reads "PE 2 passed OpMax", not 4.
var opNames = [...]string{1: "OpSum", 2: "OpProd", 3: "OpMin", 4: "OpMax", 5: "OpAnd", 6: "OpOr", 7: "OpXor"}

// opName names an Args.Op (opNames), or gives its number when it has no name.
func opName(v uint64) string {
	if v < uint64(len(opNames)) && opNames[v] != "" {
		return opNames[v]
	}
	return fmt.Sprint(int64(v))
}
