package udma

import (
	"errors"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// A growable segment: the owner grows its file and mapping, a peer maps
// the new part of the same file, and a word written through one mapping
// in the grown part reads back through the other; past the limit Grow
// refuses with ErrOutOfMemory.
func TestSegmentGrows(t *testing.T) {
	job := testJob(t)
	const heap, limit = 64 << 10, 1 << 20
	own, err := CreateGrowable(job, 0, heap, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	defer own.Unlink()
	peer, err := OpenGrowable(job, 0, heap, limit)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if len(own.Reservation()) != limit || own.Usable() != heap {
		t.Fatalf("reservation %d usable %d", len(own.Reservation()), own.Usable())
	}
	// Growing the peer's mapping before the owner's file is refused.
	if err := peer.Grow(4 * heap); !errors.Is(err, errs.ErrPEFailed) {
		t.Fatalf("peer grew past the owner's file: %v", err)
	}
	if err := own.Grow(4 * heap); err != nil {
		t.Fatal(err)
	}
	if err := peer.Grow(4 * heap); err != nil {
		t.Fatal(err)
	}
	off := uint64(3*heap + 8)
	transport.ApplyAtomic(peer.Reservation(), transport.AtomicSet, 8, off, 0xfeed, 0)
	if got := transport.Load64(own.Reservation(), off); got != 0xfeed {
		t.Fatalf("owner reads %#x in the grown segment", got)
	}
	transport.ApplyAtomic(own.Reservation(), transport.AtomicFetchAdd, 8, 8, 5, 0)
	if got := transport.Load64(peer.Reservation(), 8); got != 5 {
		t.Fatalf("peer reads %d in the first segment", got)
	}
	if err := own.Grow(limit + 1); !errors.Is(err, errs.ErrOutOfMemory) {
		t.Fatalf("growing past the limit: %v", err)
	}
	if err := own.Grow(limit); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateGrowable(job, 1, heap, heap-1); !errors.Is(err, errs.ErrInvalidArgument) {
		t.Fatalf("limit below the size: %v", err)
	}
}
