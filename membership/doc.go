// Package membership forms a goshmem world by gossip, without an MPI
// launcher: every process of a job runs Form with the same job ID, version,
// secret and PE count and a few seed addresses; Form returns once all npes
// processes have found each other and agreed on one rank table, and the
// World it returns then reports members that die or leave without announcing
// it gracefully (World.Leave).
//
// It is built on hashicorp/memberlist (SWIM). Gossip, state exchange and
// the direct sealing messages are encrypted with a key derived from the job
// secret, so a process without the secret cannot join. Processes of another
// job or version, and any process beyond the npes-th, are refused by the
// alive and merge delegates and never enter the table. Within the job
// every holder of the secret is trusted alike: a direct message's From is
// the sender's own claim (memberlist's user messages do not say who sent
// them), so a process with the secret could speak for another member; a
// process without it cannot be heard at all.
//
// Discovery: each process joins a seed, and joins again every JoinInterval
// while its view holds fewer than npes processes, since a single join can
// leave a view incomplete for many push-pull periods.
//
// Agreement ("sealing"): once a process sees npes candidates it computes the
// rank table (the npes earliest-started, ranked by hint or name) and its
// hash. A candidate memberlist reports dead keeps its place (it may refute)
// only while fewer than npes live ones are seen: a process restarted in
// place of one killed before sealing takes that place. A dead candidate
// that nobody replaces within a grace (max(4 JoinInterval,
// PushPullInterval, 10 ProbeInterval), 5 s by default, started over while
// this process is behind) ends Form with ErrPEFailed naming it, so a
// process killed after the others saw it costs the failure detector's
// time (SuspicionMult, a few seconds) and the grace, not FormTimeout. The table's rank 0
// is its leader. Every other member reports its
// hash to the leader directly (a memberlist user message over TCP), and the
// leader seals when every member's latest report carries its own hash, then
// sends the seal to each member directly. A member seals on the seal message
// or, should that be lost, on a member's gossiped header that says sealed
// with a hash this member once computed; a sealed leader also answers any
// later report with the seal. So once all npes processes are live and see
// each other, sealing takes one report and one seal message, not gossip
// rounds that a loaded host drops; repeats cover lost messages (an
// undelivered report is repeated every JoinInterval, a delivered one every
// PushPullInterval).
//
// Departure: memberlist does not tell its delegates whether a member left
// or died, so World.Leave says it twice before leaving: a direct message
// to every member (the same reliable stream as sealing) and a Leaving mark
// in its gossiped header, which alone would reach members beyond the three
// gossip targets only through relays. A departure announced either way is
// not reported on Failures.
//
// Bounds: Form gives up at FormTimeout (or when ctx ends) with an error that
// names how many processes it saw and which ranks are missing, or, with a
// complete view, which members did not report the leader's table or that
// the leader sent no seal; and what it knows of the cause: the processes
// it refused (another world size, version or job, or a full world) with
// their addresses, table members gossip reports dead, and, when no join
// ever succeeded, the seeds and memberlist's last join error. It then cuts the joins and messages in flight (which
// memberlist would hold for its TCP timeout, 5 s, towards a peer that
// stalls), waits for its own goroutines and for memberlist's, which
// memberlist's Shutdown does not (a probe in flight ends within
// ProbeInterval; they are found by a profiler label, gang.go), and
// leaves no goroutine or socket behind; Close likewise. The gossip port keeps at most 128 inbound TCP
// streams open (memberlist's NetTransport wrapped, streams.go); a newer one
// closes the oldest, so a stranger's flood costs bounded descriptors and
// goroutines and members still get in. Each stream ends after what a
// push-pull of the world's state can need (streambytes.go), since
// memberlist buffers up to 20 MB a stream before it authenticates it.
package membership
