// Package portskip opens sockets on ports the kernel chooses while keeping
// clear of ports the job binds later: the unique ID's rendezvous port and
// gossip seed ports, which may lie in the kernel's ephemeral range and are
// bound only after a PE has opened its listeners and its fabric endpoint.
// Package bootstrap's port-0 listeners and the world's fabric node share
// it, so both skip the same way.
package portskip
