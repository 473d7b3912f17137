package world

import (
	"slices"
	"testing"

	"github.com/goshmem/shmem/bootstrap"
)

// The ports a PE's listeners skip: the unique ID's rendezvous port, or in
// a gossip world every seed's and this member's gossip port (a listener
// of a seed's host could otherwise be handed the port the seed binds
// next, as a PE's control lane was handed the rendezvous port in a CI run
// of examples/allgather).
func TestLaterPorts(t *testing.T) {
	j := &joiner{cfg: Config{UID: bootstrap.UniqueID{Addr: "127.0.0.1:40001"}}}
	if got := j.laterPorts(); !slices.Equal(got, []int{40001}) {
		t.Errorf("rendezvous world: %v, want [40001]", got)
	}
	j.cfg.Gossip = &GossipConfig{Bind: "127.0.0.1:41000", Seeds: []string{"10.0.0.1:41001", "[::1]:41002", "bad", "host:0"}}
	if got := j.laterPorts(); !slices.Equal(got, []int{41000, 41001, 41002}) {
		t.Errorf("gossip world: %v, want [41000 41001 41002]", got)
	}
}
