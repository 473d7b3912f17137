// Package udma is the same-host transport: every PE on a host is an OS
// process whose symmetric heap lives in a named shared-memory segment under
// /dev/shm that every other PE on the host maps, so a put is a copy into the
// peer's mapping and a remote atomic is a hardware atomic on a shared word.
//
// This package builds those segments (Create, Open), the cross-process
// wait/wake over a futex in each segment's header (FutexBell), and the
// clean-up that keeps /dev/shm empty after a crash (Reap, ReapStale).
package udma
