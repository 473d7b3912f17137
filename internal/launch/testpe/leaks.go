package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/goleak"

	"github.com/goshmem/shmem/bootstrap"
)

// gossipProbeBound is how long a memberlist probe or push-pull under way
// at Finalize may last: memberlist's Shutdown waits for neither. A probe
// ends at its deadline, one ProbeInterval (500 ms) stretched up to 8x by
// memberlist's awareness when the host cannot reach its peers (a cut
// link); a push-pull's dial to a vanished host ends at memberlist's
// TCPTimeout (5 s, membership/form.go).
const gossipProbeBound = 5*time.Second + time.Second

// The goroutines of a memberlist probe or push-pull under way (see
// gossipProbeBound).
var gossipProbe = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/hashicorp/memberlist.(*Memberlist).probeNode"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/memberlist.(*Memberlist).sendPingAndWaitForAck"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/memberlist.(*Memberlist).pushPullTrigger"),
}

// leaks reports what outlives Finalize. Finalize closes every socket of
// the control lane and the data path before it returns; only a
// gossip probe under way may still hold one, until gossipProbeBound.
// goleak gives goroutines already told to end a moment to return.
func leaks() error {
	open := nonGossip(sockets())
	// A socket in no TCP or UDP table (a netlink socket of an interface
	// listing, or one the kernel is tearing down) gets a moment to go.
	for grace := time.Now().Add(time.Second); len(open) > 0 && allUnknown(open) && time.Now().Before(grace); {
		time.Sleep(10 * time.Millisecond) // polling the fd table: nothing to wait on
		open = nonGossip(sockets())
	}
	if len(open) > 0 {
		return fmt.Errorf("%d sockets open when Finalize returned: %s", len(open), strings.Join(open, ", "))
	}
	if err := goleak.Find(gossipProbe...); err != nil {
		return err
	}
	deadline := time.Now().Add(gossipProbeBound)
	for {
		open := sockets()
		if len(open) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gossip sockets open %v after Finalize: %s", gossipProbeBound, strings.Join(open, ", "))
		}
		time.Sleep(10 * time.Millisecond) // polling the fd table: nothing to wait on
	}
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// sockets lists this process's open sockets, as "fd N inode I", but the
// launcher's status socket (bootstrap.EnvStatusFD), which is the
// process's, not the world's, and lives until the process ends.
func sockets() []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return []string{err.Error()}
	}
	status := os.Getenv(bootstrap.EnvStatusFD)
	var open []string
	for _, e := range ents {
		if e.Name() == status {
			continue
		}
		l, err := os.Readlink("/proc/self/fd/" + e.Name())
		if ino, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			open = append(open, "fd "+e.Name()+" inode "+strings.TrimSuffix(ino, "]"))
		}
	}
	return open
}

// nonGossip returns the sockets of sockets' list that are not memberlist's:
// those neither bound to nor connected to the gossip port, with their
// addresses.
func nonGossip(open []string) []string {
	if len(open) == 0 {
		return nil
	}
	addrs := socketAddrs()
	port := gossipPort()
	var other []string
	for _, s := range open {
		a, ok := addrs[s[strings.LastIndex(s, " ")+1:]]
		if ok && port != 0 && (a.local == port || a.remote == port) {
			continue
		}
		if !ok {
			a.text = notTCPOrUDP
		}
		other = append(other, fmt.Sprintf("%s (%s)", s, a.text))
	}
	return other
}

const notTCPOrUDP = "in no TCP or UDP table"

// allUnknown reports whether every socket of nonGossip's list is in no TCP
// or UDP table.
func allUnknown(open []string) bool {
	for _, s := range open {
		if !strings.Contains(s, notTCPOrUDP) {
			return false
		}
	}
	return true
}

type sockAddr struct {
	local, remote uint64
	text          string
}

// socketAddrs maps inodes to the ports of this network namespace's TCP
// and UDP sockets (/proc/net/{tcp,udp}{,6}).
func socketAddrs() map[string]sockAddr {
	m := map[string]sockAddr{}
	for _, name := range []string{"tcp", "tcp6", "udp", "udp6"} {
		f, err := os.Open("/proc/self/net/" + name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 {
				continue
			}
			m[fs[9]] = sockAddr{local: hexPort(fs[1]), remote: hexPort(fs[2]),
				text: fmt.Sprintf("%s %s -> %s state %s", name, fs[1], fs[2], fs[3])}
		}
		f.Close()
	}
	return m
}

// hexPort reads the port of a /proc/net address ("0100007F:B487").
func hexPort(addr string) uint64 {
	_, p, _ := strings.Cut(addr, ":")
	v, _ := strconv.ParseUint(p, 16, 16)
	return v
}

// gossipPort is the port of SHMEM_GOSSIP_ADDR, where memberlist binds;
// 0 when the PE does not gossip.
func gossipPort() uint64 {
	_, p, _ := strings.Cut(os.Getenv("SHMEM_GOSSIP_ADDR"), ":")
	v, _ := strconv.ParseUint(p, 10, 16)
	return v
}
