package world

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/goshmem/shmem/transport/udma"
)

// TestUnsharedHeapNameGoesBeforeTheVote: a PE whose heap no peer maps
// (over TCP, or alone on its host) has unlinked its /dev/shm name when it
// votes in Init's closing agreement, so that a kill right after the vote
// leaves nothing behind; nobody else would unlink it, as nobody mapped it.
// A heap a same-host peer maps keeps its name through the vote (the peer
// may still be opening it).
func TestUnsharedHeapNameGoesBeforeTheVote(t *testing.T) {
	for i, c := range []struct {
		name     string
		peerHost string
		network  bool
		named    bool // the name is still there at the vote
	}{
		{"other host", "host-b", false, false},
		{"network forced", "host-a", true, false},
		{"same host", "host-a", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			job := fmt.Sprintf("unshared%d-%d", os.Getpid(), i)
			seg, err := udma.Create(job, 0, 1<<16)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = seg.Unlink()
				_ = seg.Close()
			}()
			j := &joiner{seg: seg, hostID: "host-a",
				recs: []record{{Rank: 0, Host: "host-a"}, {Rank: 1, Host: c.peerHost}}}
			j.cfg.Network = c.network
			voted := errors.New("voted")
			err = j.initVote(func() error {
				left, err := udma.List(job)
				if err != nil {
					t.Fatal(err)
				}
				if named := len(left) > 0; named != c.named {
					t.Errorf("at the vote the heap's name is there: %v, want %v (%v)", named, c.named, left)
				}
				return voted
			})
			if !errors.Is(err, voted) {
				t.Fatalf("initVote returned %v, want the agreement's error", err)
			}
		})
	}
}
