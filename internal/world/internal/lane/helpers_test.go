package lane

import (
	"crypto/tls"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/goshmem/shmem/actors"
	"github.com/goshmem/shmem/internal/actorsys"
	"github.com/goshmem/shmem/internal/secure"
)

// hangGuard bounds every wait of these tests; reaching it fails them. It
// is not a timing assertion: what they wait for takes milliseconds.
const hangGuard = 30 * time.Second

// fastTiming makes failure detection quick in tests.
var fastTiming = Timing{Heartbeat: 20, Silence: 300, Connect: 3000, Retry: 20}

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// noLeaks checks, after the test and its cleanups, that no goroutine it
// started is left and that no socket it opened is still open.
func noLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	fds := socketCount(t)
	t.Cleanup(func() {
		goleak.VerifyNone(t, before)
		if n := socketCount(t); n > fds {
			t.Errorf("%d sockets open after the test, %d before", n, fds)
		}
	})
}

func socketCount(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// peerLeft is what a test node's OnLeft sends its sink: the peer that left.
type peerLeft int

// node is one PE's process in a test world: an actor system, its lane
// and what its actors received.
type node struct {
	sys  *actor.ActorSystem
	lane *Lane
	got  chan any // messages the "sink" actor received
	lost chan int // peers OnLost reported
}

// world starts n lanes on loopback, joins them and sets the routes
// reach gives (nil: everyone reaches everyone). Each node runs a "sink"
// actor that records what it gets and answers a Gather with its payload.
func world(t *testing.T, n int, tlsOn bool, timing Timing, reach [][]bool) []*node {
	t.Helper()
	return worldWith(t, n, tlsOn, timing, reach, worldOpts{})
}

// worldOpts adjusts worldWith's world.
type worldOpts struct {
	// maxUnauth sets every lane's MaxUnauthenticated (0: the default).
	maxUnauth int
	// listen wraps rank r's listener (nil: as opened).
	listen func(r int, ln net.Listener) net.Listener
	// beforeJoin runs once every lane serves, before any joins.
	beforeJoin func(nodes []*node)
}

// worldWith is world with the adjustments of o.
func worldWith(t *testing.T, n int, tlsOn bool, timing Timing, reach [][]bool, o worldOpts) []*node {
	t.Helper()
	var serverTLS, clientTLS *tls.Config
	if tlsOn {
		s, c, err := secure.JobConfigs(testSecret)
		if err != nil {
			t.Fatal(err)
		}
		serverTLS, clientTLS = s, c
	}
	nodes := make([]*node, n)
	addrs := make([]string, n)
	for r := range nodes {
		nd := &node{sys: actorsys.NewSystem(nil), got: make(chan any, 1000), lost: make(chan int, 100)}
		var ln net.Listener
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if o.listen != nil {
			ln = o.listen(r, ln)
		}
		nd.lane, err = New(Config{Listener: ln, ServerTLS: serverTLS, ClientTLS: clientTLS, Secret: testSecret,
			System: nd.sys, Timing: timing, MaxUnauthenticated: o.maxUnauth, OnLost: func(p int, why string, _ bool) { t.Logf("PE %d lost PE %d: %s", r, p, why); nd.lost <- p },
			OnLeft: func(p int) { nd.sys.Root.Send(actor.NewPID(nd.sys.Address(), "sink"), peerLeft(p)) }})
		if err != nil {
			t.Fatal(err)
		}
		addrs[r] = nd.lane.Addr()
		_, err = nd.sys.Root.SpawnNamed(actor.PropsFromFunc(func(ctx actor.Context) {
			switch m := ctx.Message().(type) {
			case *actors.Gather:
				if ctx.Sender() != nil {
					ctx.Respond(&actors.GatherReply{Payloads: [][]byte{m.Payload}, Failed: -1})
				}
				nd.got <- m
			case *actors.PEFailed, *actors.GlobalExit, *actors.GatherReply, peerLeft:
				nd.got <- m
			}
		}), "sink")
		if err != nil {
			t.Fatal(err)
		}
		nodes[r] = nd
	}
	t.Cleanup(func() {
		for _, nd := range nodes {
			if err := nd.lane.Close(); err != nil {
				t.Error(err)
			}
			nd.sys.Shutdown()
		}
	})
	if o.beforeJoin != nil {
		o.beforeJoin(nodes)
	}
	if reach == nil {
		reach = make([][]bool, n)
		for a := range reach {
			reach[a] = make([]bool, n)
			for b := range reach[a] {
				reach[a][b] = true
			}
		}
	}
	for r, nd := range nodes {
		if err := nd.lane.Join(r, addrs); err != nil {
			t.Fatal(err)
		}
		nd.lane.SetRoutes(Routes(reach, r))
	}
	return nodes
}

// next returns the next message nd's sink received.
func (nd *node) next(t *testing.T) any {
	t.Helper()
	select {
	case m := <-nd.got:
		return m
	case <-time.After(hangGuard):
		t.Fatal("no message arrived")
		return nil
	}
}

// nextLost returns the next peer nd's lane declared failed.
func (nd *node) nextLost(t *testing.T) int {
	t.Helper()
	select {
	case p := <-nd.lost:
		return p
	case <-time.After(hangGuard):
		t.Fatal("no peer was declared failed")
		return -1
	}
}

// crash ends nd's connections without a bye, as a killed process's
// kernel does, and stops it from answering.
func (nd *node) crash() {
	nd.lane.end()
	nd.lane.cfg.Listener.Close()
	nd.lane.mu.Lock()
	for _, c := range nd.lane.conns {
		c.Close()
	}
	nd.lane.mu.Unlock()
}

func secureConfigs(t *testing.T, secret []byte) (server, client *tls.Config, err error) {
	t.Helper()
	return secure.JobConfigs(secret)
}
