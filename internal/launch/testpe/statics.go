package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"syscall"

	"github.com/goshmem/shmem"
)

// staticsRegion is RoleFabricStatics' statics region: 64 KiB, so that a
// put of 40000 bytes takes the fabric provider's pinned route (past its
// bounce buffers) as well as the small ones. It is a mapping, not Go
// memory, as a C program's statics are: libfabric keeps the address of
// what the node registers (fabric.Config.Statics), which cgo forbids for
// Go memory.
var staticsRegion = anonMap(64 << 10)

// anonMap returns n bytes of a fresh anonymous mapping, or nil when the
// kernel refuses one (the role's check of the region's size then fails).
func anonMap(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	return b
}

// staticsBytes is the pattern PE from writes.
func staticsBytes(from, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from*31 + i*7 + 1)
	}
	return b
}

// fabricStatics checks that each PE reaches the next PE's statics region
// (and every PE PE 0's word) over its path: a put of 40000 bytes and one
// of 100, a get of both back, a fetch-add by every PE, a put-with-signal
// with the data in the region and the signal in the heap, and one the
// other way round. The values are read from the regions' bytes.
func fabricStatics(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	next, prev := (me+1)%n, (me+n-1)%n
	region := staticsRegion
	st, ok := p.Statics()
	if !ok || st.Len() != len(region) {
		return fmt.Errorf("Statics = %d bytes, %v; want %d", st.Len(), ok, len(region))
	}
	words := shmem.SymAs[uint64](st)
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	heapData, err := shmem.Calloc[byte](p, 8)
	if err != nil {
		return err
	}
	// Layout of the region: word 0 PE 0's counter, word 1 the signal from
	// prev, bytes 64.. its large put, 48000.. its small one, 49000.. the
	// data of its put-with-signal.
	big, small := staticsBytes(me, 40000), staticsBytes(me+100, 100)
	if err := shmem.Put(p, st.Slice(64, 64+len(big)), big, next); err != nil {
		return err
	}
	if err := shmem.Put(p, st.Slice(48000, 48100), small, next); err != nil {
		return err
	}
	if _, err := shmem.AtomicFetchAdd(p, words.Slice(0, 1), uint64(me+1), 0); err != nil {
		return err
	}
	if err := shmem.PutSignal(p, st.Slice(49000, 49008), small[:8], sig, 1, shmem.SignalSet, next); err != nil {
		return err
	}
	if err := shmem.PutSignal(p, heapData, small[8:16], words.Slice(1, 2), uint64(me+1), shmem.SignalAdd, next); err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	wantBig, wantSmall := staticsBytes(prev, 40000), staticsBytes(prev+100, 100)
	switch {
	case !bytes.Equal(region[64:40064], wantBig) || !bytes.Equal(region[48000:48100], wantSmall):
		return fmt.Errorf("PE %d: the puts from PE %d are not in the statics region", me, prev)
	case !bytes.Equal(region[49000:49008], wantSmall[:8]) || sig.Local(p)[0] != 1:
		return fmt.Errorf("PE %d: put-signal into the region: %v, signal %d", me, region[49000:49008], sig.Local(p)[0])
	case !bytes.Equal(heapData.Local(p), wantSmall[8:16]) || binary.NativeEndian.Uint64(region[8:]) != uint64(prev+1):
		return fmt.Errorf("PE %d: put-signal with the signal in the region: %v, %d", me, heapData.Local(p), binary.NativeEndian.Uint64(region[8:]))
	case me == 0 && binary.NativeEndian.Uint64(region[0:]) != uint64(n*(n+1)/2):
		return fmt.Errorf("fetch-adds on PE 0's word = %d, want %d", binary.NativeEndian.Uint64(region[0:]), n*(n+1)/2)
	}
	got := make([]byte, len(big))
	if err := shmem.Get(p, got, st.Slice(64, 64+len(big)), next); err != nil || !bytes.Equal(got, big) {
		return fmt.Errorf("PE %d: get of its large put back from PE %d: %v", me, next, err)
	}
	if err := shmem.Get(p, got[:100], st.Slice(48000, 48100), next); err != nil || !bytes.Equal(got[:100], small) {
		return fmt.Errorf("PE %d: get of its small put back from PE %d: %v", me, next, err)
	}
	return p.BarrierAll()
}
