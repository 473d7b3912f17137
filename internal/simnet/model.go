package simnet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/goshmem/shmem/internal/errs"
)

// Params are the LogGP-style costs of one class of link, in nanoseconds.
type Params struct {
	// Latency is the time from a message leaving its sender to its data
	// being in the target's memory; a Quiet waits one more for the ack.
	Latency float64 `json:"latency_ns"`
	// Overhead is the sender's busy time per message (o).
	Overhead float64 `json:"overhead_ns"`
	// Gap is the least time between two messages of one sender (g).
	Gap float64 `json:"gap_ns"`
	// PerByte is the sender's time per byte (G, the inverse bandwidth).
	PerByte float64 `json:"per_byte_ns"`
	// Wake is how long a PE blocked in a wait takes to notice the write
	// that ends it (polling, a futex wake-up or the network poller).
	Wake float64 `json:"wake_ns"`
	// Slice is what a wake-up costs more per PE beyond one per core on
	// the waker's node (Model.Cores): the waiting process must first be
	// scheduled.
	Slice float64 `json:"oversubscribed_wake_ns"`
}

// Model is a cost model: Intra for PEs on one node, Inter between nodes.
type Model struct {
	Name  string `json:"name"`
	Intra Params `json:"intra"`
	Inter Params `json:"inter"`
	// Cores is the cores per node; 0 means a core for every PE. With f
	// PEs per core (f > 1) every wake-up costs (f-1)·Intra.Slice more.
	Cores int `json:"cores_per_node"`
}

// LoadModel reads a Model from a JSON file shaped like
// {"name":…, "intra":{"latency_ns":…, …}, "inter":{…}}.
func LoadModel(file string) (*Model, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decodeModel(b, file)
}

// decodeModel decodes and checks a model file's bytes; file names it in
// errors and is its name when it has none.
func decodeModel(b []byte, file string) (*Model, error) {
	var m Model
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("model %s: %w", file, err)
	}
	if err := CheckModel(&m); err != nil {
		return nil, fmt.Errorf("model %s: %w", file, err)
	}
	if m.Name == "" {
		m.Name = file
	}
	return &m, nil
}

// maxCost bounds one cost parameter, in nanoseconds (a day).
const maxCost = 86400e9

// CheckModel returns an error wrapping errs.ErrInvalidArgument that names
// the first cost of m outside [0, maxCost) (NaN included) or a negative
// Cores, and nil when m is usable: how a model file and a Model built in
// code (sim.WithModel) are checked alike.
func CheckModel(m *Model) error {
	if m.Cores < 0 {
		return fmt.Errorf("cores_per_node %d is negative: %w", m.Cores, errs.ErrInvalidArgument)
	}
	for _, l := range []struct {
		name string
		p    *Params
	}{{"intra", &m.Intra}, {"inter", &m.Inter}} {
		for _, f := range []struct {
			name string
			v    float64
		}{{"latency_ns", l.p.Latency}, {"overhead_ns", l.p.Overhead}, {"gap_ns", l.p.Gap},
			{"per_byte_ns", l.p.PerByte}, {"wake_ns", l.p.Wake}, {"oversubscribed_wake_ns", l.p.Slice}} {
			// A cost of a day or more is a typo, and an overflow to +Inf
			// would freeze every virtual clock; NaN would make every
			// comparison of clocks false.
			if !(f.v >= 0 && f.v < maxCost) {
				return fmt.Errorf("%s %s %v is outside [0, %v): %w", l.name, f.name, f.v, maxCost, errs.ErrInvalidArgument)
			}
		}
	}
	return nil
}

func (n *Net) link(a, b int) *Params {
	m := n.cfg.Model
	if n.cfg.NodeOf == nil || n.cfg.NodeOf(a) == n.cfg.NodeOf(b) {
		return &m.Intra
	}
	return &m.Inter
}

// relayed reports whether the link from a to b is lost, so its traffic
// takes a second hop.
func (n *Net) relayed(a, b int) bool {
	return n.down != nil && n.down[[2]int{min(a, b), max(a, b)}]
}

// send charges p for a message of size bytes to PE to and returns its
// arrival time; arrivals from one PE never overtake each other, which is
// stricter than the spec asks but keeps fences free.
func (n *Net) send(p *pe, to int32, size int) float64 {
	n.stats.count(p.rank, int(to), size)
	if n.cfg.Model == nil {
		return 0
	}
	c := n.link(p.rank, int(to))
	start := max(p.clock, p.lastSend+c.Gap*p.slow)
	p.lastSend = start
	p.clock = start + c.Overhead*p.slow + float64(size)*c.PerByte
	arrive := p.clock + c.Latency
	if n.relayed(p.rank, int(to)) {
		arrive += c.Latency + c.Overhead
	}
	arrive = max(arrive, p.lastArrive)
	p.lastArrive = arrive
	p.lastAck = max(p.lastAck, arrive+c.Latency)
	p.sent = true
	return arrive
}

// roundTrip charges p for a blocking request of size bytes to PE to.
func (n *Net) roundTrip(p *pe, to int32, size int) {
	n.stats.count(p.rank, int(to), size)
	if n.cfg.Model == nil {
		return
	}
	c := n.link(p.rank, int(to))
	hops := 1.0
	if n.relayed(p.rank, int(to)) {
		hops = 2
	}
	start := max(p.clock, p.lastSend+c.Gap*p.slow)
	p.lastSend = start
	p.clock = start + c.Overhead*p.slow + hops*(2*c.Latency) + float64(size)*c.PerByte
}

// waitAcks charges a Quiet: it returns one latency after the last write
// arrived, when the ack is back.
func (n *Net) waitAcks(p *pe) {
	if n.cfg.Model == nil || !p.sent {
		return
	}
	p.clock = max(p.clock, p.lastAck)
	p.sent = false
}

// earliestReady returns the earliest clock of a ready PE.
func (n *Net) earliestReady() float64 {
	return n.ready[0].clock // a heap with a model
}
