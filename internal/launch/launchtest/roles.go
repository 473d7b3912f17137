package launchtest

import "time"

// The variables the test PE program reads, beside the launch's own.
const (
	// EnvRole names the role when the program has no argument.
	EnvRole = "GOSHMEM_TEST_ROLE"
	// EnvWho is the rank a role singles out (the PE that dies, fails or
	// calls GlobalExit); default the last PE.
	EnvWho = "TEST_WHO"
	// EnvNoTLS=1 passes shmem.WithoutTLS to Init.
	EnvNoTLS = "TEST_NO_TLS"
	// EnvTLSPEM is a directory with ca.pem, pe.pem and pe.key for
	// shmem.WithTLS.
	EnvTLSPEM = "TEST_TLS_PEM"
	// EnvSeeds is a comma list of gossip seeds for shmem.WithSeeds; the
	// world size is SHMEM_NPES, or EnvGossipNPEs without a launcher rank.
	EnvSeeds      = "TEST_SEEDS"
	EnvGossipNPEs = "TEST_GOSSIP_NPES"
	// EnvInitTimeout is a duration for shmem.WithTimeout; default Init's.
	EnvInitTimeout = "TEST_INIT_TIMEOUT"
	// EnvReaders=1 makes the wait role's survivors read from the victim.
	EnvReaders = "TEST_READERS"
	// EnvFaultLoop names RoleFault's loop: FaultBarrier (default) or
	// FaultAlloc.
	EnvFaultLoop = "TEST_FAULT_LOOP"
	// EnvMark is a file path: RoleGiveUp's PE EnvWho creates it once it
	// has left the world, and the others wait for it.
	EnvMark = "TEST_MARK"
	// EnvCheckLeaks=1 makes a PE that finalized check that no goroutine
	// or socket outlived Finalize (gossip probes get their bound).
	EnvCheckLeaks = "TEST_CHECK_LEAKS"
)

// Roles of the test PE program. Each first joins the world (Init).
const (
	// RoleSPMD runs internal/spmdcheck: RMA, atomics, collectives, signals.
	RoleSPMD = "spmd"
	// RoleBarriers runs 300 barriers checked by a counter on PE 0.
	RoleBarriers = "barriers"
	// RoleDie: PE EnvWho exits DieStatus after a barrier; the others wait
	// in a barrier that only ErrPEFailed ends.
	RoleDie = "die"
	// RoleDieAlloc: PE EnvWho exits DieStatus after a barrier while the
	// others allocate and free in a loop (agreements through rank 0).
	RoleDieAlloc = "diealloc"
	// RoleQuit: PE EnvWho exits 0 without Finalize after a barrier; the
	// others wait in a barrier that only ErrPEFailed ends.
	RoleQuit = "quit"
	// RoleScenario prefixes the name of an internal/failcheck scenario
	// ("scenario:finalize-vs-barrier"): the PE runs it and prints
	// "RESULT body=<class> fin=<class> err=<quoted error>". It ignores
	// SIGTERM, so a launcher that stops the job still gets every result.
	RoleScenario = "scenario:"
	// RolePauseLoop: READY, then broadcasts in a loop until PE 0's stdin
	// closes; PE EnvWho prints Looping every 50 rounds.
	RolePauseLoop = "pauseloop"
	// RoleWait: once all are up (READY), PE EnvWho keeps reading from the
	// next PE while the others wait in a barrier it never joins (or read
	// from it, EnvReaders=1): every PE ends only by noticing a failure.
	RoleWait = "wait"
	// RoleHold: formed, prints READY, waits for stdin to close, runs spmd.
	RoleHold = "hold"
	// RoleExit: PE EnvWho calls GlobalExit(GlobalExitStatus) while the
	// odd PEs read from another odd PE and the even ones wait in a barrier.
	RoleExit = "exit"
	// RoleFinalizeFail: every PE finalizes, then PE EnvWho exits
	// FailStatus: a failure that cost the others nothing.
	RoleFinalizeFail = "finfail"
	// RoleFinalizeEarly: after a barrier PE EnvWho calls Finalize while
	// the others call BarrierAll, which fails them (ErrPEFailed): they
	// finalize with it and exit ExitPEFailed, PE EnvWho 0.
	RoleFinalizeEarly = "finearly"
	// RoleHello prints "hello r of n" on stdout and "stderr line from r"
	// on stderr.
	RoleHello = "hello"
	// RoleStubborn: PE EnvWho exits FailStatus after a barrier; the
	// others ignore SIGTERM, print READY and block: only SIGKILL ends them.
	RoleStubborn = "stubborn"
	// RoleBlock prints READY and blocks.
	RoleBlock = "block"
	// RoleHang leaves a segment of its job in /dev/shm (as a crash in
	// start-up would), prints READY and blocks.
	RoleHang = "hang"
	// RoleCPUs prints "cpus=LIST", the CPUs the PE may run on.
	RoleCPUs = "cpus"
	// RoleFabric runs the fabric provider's checks, then that no fabric
	// goroutine outlived Finalize; RoleFabricDie: PE EnvWho exits
	// DieStatus while the others put to it over the fabric.
	RoleFabric    = "fabric"
	RoleFabricDie = "fabricdie"
	// RoleFabricStatics gives each PE a statics region (WithStatics) and
	// checks that every PE reaches the others' over its paths: puts by
	// every route, gets, atomics and put-with-signal with either part in
	// the region.
	RoleFabricStatics = "fabricstatics"
	// RoleFault: prints READY once formed, then loops (EnvFaultLoop)
	// until an operation fails: the fault-injection suite kills a PE
	// with SIGKILL at a point of its choosing, so that every survivor
	// ends with the error it must see.
	RoleFault = "fault"
	// RoleGrow runs internal/spmdcheck.Grow with the initial heap
	// SHMEM_SYMMETRIC_SIZE; the world needs SHMEM_SYMMETRIC_SIZE_MAX at
	// 16 times that.
	RoleGrow = "grow"
	// RoleGiveUp: PE EnvWho, alone with an operation timeout
	// (GiveUpTimeout), waits in BarrierAll and then in Finalize while the
	// others are busy in their own code, so that both time out; it then
	// prints "RESULT body=<class> fin=<class> err=<quoted error>", creates
	// the file EnvMark and exits. The others wait for the file (the PE
	// has left the world by then), call BarrierAll and Finalize, and
	// print their RESULT line the same way.
	RoleGiveUp = "giveup"
	// RoleAllocs prints "ALLOCS <call>=<n>" for each barrier and
	// collective it runs, n its allocations per call
	// (testing.AllocsPerRun), then "ALLOCS DONE".
	RoleAllocs = "allocs"
)

// GiveUpTimeout is RoleGiveUp's operation timeout.
const GiveUpTimeout = 300 * time.Millisecond

// AllocsLine starts each line RoleAllocs prints.
const AllocsLine = "ALLOCS "

// RoleFault's loops.
const (
	FaultBarrier = "barrier" // BarrierAll
	FaultAlloc   = "alloc"   // Calloc and Free: agreements through rank 0
)

// InitPEFailed starts the line a PE prints after "INIT FAILED: err" when
// err wraps ErrPEFailed (Init ended because a peer failed): "INIT ERR
// PEFAILED <unix ns>", the time Init returned.
const InitPEFailed = "INIT ERR PEFAILED"

// Exit codes of the test PE program, which the tests assert.
const (
	ExitOK         = 0
	ExitError      = 1
	ExitPEFailed   = 3  // an operation failed with ErrPEFailed; Finalize reported only that, nothing leaked
	ExitFinalize   = 4  // ErrPEFailed, but Finalize failed in another way
	ExitLeak       = 5  // a goroutine or socket outlived Finalize (EnvCheckLeaks)
	ExitInitFailed = 10 // Init refused
	// DieStatus is the status of the PE that RoleDie or RoleFabricDie
	// makes exit; FailStatus that of RoleStubborn's and
	// RoleFinalizeFail's; GlobalExitStatus RoleExit's.
	DieStatus        = 7
	FailStatus       = 6
	GlobalExitStatus = 42
)

// Ready starts the line a PE prints when it is up: "READY pid=P job=J".
const Ready = "READY"

// Looping is the line RolePauseLoop's PE EnvWho prints while its loop runs.
const Looping = "LOOPING"
