// Package portskip opens sockets on ports while keeping clear of ports
// the job binds later: the unique ID's rendezvous port and gossip seed
// ports, which may lie in the kernel's ephemeral range and are bound only
// after a PE has opened its listeners and its fabric endpoint. Open takes
// the ports the kernel chooses; InRange the ports of a range
// (SHMEM_PORT_RANGE). Package bootstrap's listeners and the world's
// fabric node share it, so both pick and skip ports the same way.
package portskip
