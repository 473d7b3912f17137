package shmem

// EnvSymmetricSizeMax is the environment variable of the heap limit
// (WithHeapLimit), with the size suffixes of SHMEM_SYMMETRIC_SIZE.
const EnvSymmetricSizeMax = "SHMEM_SYMMETRIC_SIZE_MAX"

// WithHeapLimit lets the symmetric heap grow up to bytes: WithHeapSize is
// then the initial size, and a collective allocation that does not fit
// makes a further segment usable on every PE (doubling the heap, as often
// as it needs, up to the limit) before it is agreed. Every Sym stays valid
// and every offset symmetric: the heap is one reservation of address space
// as large as the limit, so a grown segment is addressed, bounds-checked
// and costs exactly as the first. An allocation that does not fit even at
// the limit fails with ErrOutOfMemory on every PE. It wins over
// SHMEM_SYMMETRIC_SIZE_MAX; a limit at or below the heap size (the
// default) means no growth. Every PE must use the same limit.
//
// Every backend grows but the fabric provider, which registers the heap
// with the NIC once and keeps it at WithHeapSize: the simulator
// (sim.WithHeapLimit), shared memory between processes (each segment file
// is extended and mapped by its owner, then by its peers) and TCP (the
// server accepts frames into the grown part from the moment it is mapped).
func WithHeapLimit(bytes int64) Option { return func(o *options) { o.heapLimit = bytes } }
