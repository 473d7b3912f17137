package main

// The two implementations the report compares, as written in the impl column.
const (
	implGoshmem = "goshmem"
	implOshmem  = "oshmem"
)

// pairing says which goshmem transport is compared with which OSHMEM one.
type pairing struct{ goshmem, oshmem string }

// pairings is the comparison table, in report order:
//
//	goshmem udma    <-> oshmem shm   both stay inside the host (goshmem's
//	goshmem sim     <-> oshmem shm   direct memory path and its simulator
//	                                 against UCX shared memory)
//	goshmem udma-long <-> oshmem shm-long  the same put with long windows
//	                                 (compare.sh's LONG_ITERS timed puts a
//	                                 size instead of OSU's 100)
//	goshmem tcp     <-> oshmem tcp   both cross the kernel's TCP stack
//	goshmem tcp-tls <-> oshmem tcp   (OSHMEM has no TLS; the ratio shows
//	                                 what encryption costs on top)
//	goshmem tcp-park <-> oshmem tcp  reads park at once instead of polling
//	                                 first (SHMEM_BUSY_POLL=0)
//	goshmem tcp-hosts     <-> oshmem tcp   goshmem between two network
//	goshmem tcp-hosts-tls <-> oshmem tcp   namespaces (bench/netns.sh): a
//	goshmem tcp-hosts-park <-> oshmem tcp
//	                                 veth and bridge path instead of
//	                                 loopback; OSHMEM's row stays loopback
//
// It is a function so the table cannot be changed at run time.
func pairings() []pairing {
	return []pairing{
		{goshmem: "udma", oshmem: "shm"},
		{goshmem: "sim", oshmem: "shm"},
		{goshmem: "udma-long", oshmem: "shm-long"},
		{goshmem: "tcp", oshmem: "tcp"},
		{goshmem: "tcp-tls", oshmem: "tcp"},
		{goshmem: "tcp-park", oshmem: "tcp"},
		{goshmem: "tcp-hosts", oshmem: "tcp"},
		{goshmem: "tcp-hosts-tls", oshmem: "tcp"},
		{goshmem: "tcp-hosts-park", oshmem: "tcp"},
	}
}

// paired reports whether impl/transport appears in the pairing table.
func paired(impl, transport string) bool {
	for _, p := range pairings() {
		if (impl == implGoshmem && transport == p.goshmem) ||
			(impl == implOshmem && transport == p.oshmem) {
			return true
		}
	}
	return false
}
