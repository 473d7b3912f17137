// Package launch starts the PE processes of one goshmem job and watches
// them to the end: shmemrun, shmem-perf -np and every test that runs PE
// processes use it, so there is one place that knows how a PE is started.
//
// Start gives each PE the environment bootstrap.DetectLaunch reads (rank,
// size, local rank and size, the rendezvous: a unique ID, a unique-ID file
// or a job secret), this process's pid as bootstrap.EnvLauncherPID and a
// status socket as bootstrap.EnvStatusFD (internal/pestatus: the PE's
// reports of its Finalize, its GlobalExit and the first PE it saw fail,
// from which Result names the PE that ended the job); starts each in its
// own process group, optionally through a hook (a network namespace) and
// bound to CPUs; prefixes, forwards or captures its output line by line;
// collects every PE's exit status; and, if asked, stops the others at the
// first failure, bounds the job's time and forwards signals.
//
// PEs die with their launcher: each is started with a parent-death signal
// (SIGKILL), and a PE checks at Init that its launcher is still an
// ancestor (bootstrap.CheckLauncher). The signal fires when the launcher
// thread that forked the PE ends, so every PE of a job is forked from one
// goroutine locked to its OS thread for as long as any of its PEs runs.
package launch
