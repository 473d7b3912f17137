package core

import "github.com/goshmem/shmem/transport"

// Net is a simulated network for a LocalWorld (the simulator's Lazy
// delivery, seeded scheduling, fault injection and cost model): it wraps
// each PE's bell and each data path, and hears when a PE blocks on
// something that is neither (a control-plane agreement), so a scheduler
// that runs one PE at a time can let the others run meanwhile.
type Net interface {
	Bell(rank int, b transport.Bell) transport.Bell
	// Path returns the path from PE from to PE to, whose heap is mem;
	// mappable says whether Ptr may hand mem out (same node).
	Path(from, to int, mem []byte, mappable bool) transport.Path
	// Block is called by PE rank before it blocks outside its paths and
	// bell; it calls the returned function once it runs again.
	Block(rank int) (resume func())
}
