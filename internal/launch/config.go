package launch

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
)

// Config describes a job to start. Program and NPEs are required; every
// other field's zero value is its default, stated with the field.
type Config struct {
	// Program is what every PE runs, found in PATH as exec.Command finds
	// it. Required.
	Program string
	// Args are the program's arguments. Default none.
	Args []string
	// NPEs is the size of the job, 1..bootstrap.MaxNPEs. Required.
	NPEs int
	// NoRank leaves out the rank, size and local variables: for worlds
	// formed by gossip whose PEs number themselves (shmem.WithSeeds
	// without a launcher). Default false: every PE gets its rank.
	NoRank bool
	// Ranks are the ranks this launcher starts. Default nil: all of
	// 0..NPEs-1. A job spread over several launchers (one per host, or a
	// test that starts a late PE) gives each its share.
	Ranks []int

	// Env is the environment every PE starts from. Default nil: this
	// process's environment when Start is called. The launch variables
	// (rank, size, rendezvous, bootstrap.EnvLauncherPID) are always
	// replaced, so values inherited from an outer job cannot contradict
	// this one.
	Env []string
	// RankEnv returns variables for PE rank, added after everything else
	// and replacing any earlier value of the same name. Default nil: none.
	// Settings for every PE (a heap size, a transport) go here too.
	RankEnv func(rank int) []string
	// UniqueID is every PE's SHMEM_UNIQUE_ID, the usual rendezvous.
	// Default "": not set, and the PEs find each other through UIDFile,
	// Secret or what RankEnv gives (gossip seeds, MASTER_ADDR).
	UniqueID string
	// UIDFile is every PE's SHMEM_UID_FILE: PE 0 writes the unique ID
	// there, the others read it. Default "": not set.
	UIDFile string
	// Secret is every PE's SHMEM_JOB_SECRET (gossip, torchrun-style
	// rendezvous). Default "": the inherited value, if any, is kept.
	Secret string
	// Hosts[r] is the host PE r runs on: PEs of one host get
	// SHMEM_LOCAL_RANK and SHMEM_LOCAL_SIZE among themselves and
	// SHMEM_HOST_ID "host<h>", so PEs of different hosts never share
	// memory even when they share /dev/shm (network namespaces). Default
	// nil: every PE is on this host and no SHMEM_HOST_ID is set.
	Hosts []int
	// Command makes the command that runs PE rank (run it inside a
	// network namespace, say); the launcher then sets its environment,
	// output and process attributes. Default nil: exec.Command.
	Command func(rank int, name string, args ...string) *exec.Cmd
	// CPUs[r] are the CPUs PE r is bound to (affinity.ForJob plans them).
	// Default nil: unbound, the scheduler places the PEs.
	CPUs [][]int

	// Stdout and Stderr receive the PEs' output, line by line, each line
	// whole and prefixed by Prefix. Default nil: not forwarded.
	Stdout, Stderr io.Writer
	// Prefix returns the text put before each line of PE rank's output.
	// Default nil: none (shmemrun passes RankPrefix).
	Prefix func(rank int) string
	// Capture keeps each PE's stdout and stderr lines, interleaved, for
	// Proc.Output. Default false: a long job's output would grow without
	// bound.
	Capture bool
	// OnLine is called with each line (without its newline) a PE writes
	// on either stream, from the goroutine copying that stream; it must
	// not block, or that PE's output stalls. Default nil: none.
	OnLine func(rank int, line string)
	// Stdin gives each PE a pipe on its standard input (Proc.Stdin).
	// Default false: stdin is /dev/null, so no PE reads the terminal.
	Stdin bool

	// KillOnFailure stops the other PEs when one fails (a non-zero status
	// or a signal), 200 ms later (settleWindow, to hear which PEs had quit
	// before it), as a launcher must so a job does not hang on a dead PE. Default false: each PE runs to its own end, which tests need to
	// see what every survivor reports.
	KillOnFailure bool
	// Grace is how long PEs get between SIGTERM (or a forwarded signal)
	// and SIGKILL when they are stopped. Default 0: SIGKILL at once;
	// shmemrun gives 5 s so Finalize-less PEs can flush their logs.
	Grace time.Duration
	// Timeout bounds the job: PEs still running after it are stopped as
	// on a failure and Result.TimedOut is set. Default 0: none; tests set
	// one so a hang fails the test instead of stalling it.
	Timeout time.Duration
	// QuitOnTimeout sends SIGQUIT first when Timeout stops the job, and
	// the stop follows quitWait later: a Go PE then prints every
	// goroutine's stack (or, with SHMEM_HANG_REPORT, its hang report) into
	// its output, so a test that hangs says where. Default false: a
	// launcher's users get the stop at once.
	QuitOnTimeout bool
	// Signals are forwarded to every running PE's process group; a second
	// one while stopping kills them. SIGQUIT is passed on and stops
	// nothing: it asks each PE for its hang report (SHMEM_HANG_REPORT).
	// Default nil: none (a test, or a launcher that leaves SIGINT to the
	// terminal's process group).
	Signals <-chan os.Signal

	// Logf receives the launcher's notices (a PE failed and the others
	// are stopped, a PE killed after the grace period), one line each
	// without a newline. Default nil: silent.
	Logf func(format string, args ...any)
	// Verbose adds a notice for each PE's pid and end. Default false.
	Verbose bool
}

// RankPrefix is the "[PE r] " that shmemrun puts before each output line.
func RankPrefix(rank int) string { return fmt.Sprintf("[PE %d] ", rank) }

// check validates c; errors wrap errs.ErrInvalidArgument.
func (c *Config) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("launch: "+format+": %w", append(args, errs.ErrInvalidArgument)...)
	}
	switch {
	case c.Program == "":
		return bad("no program")
	case c.NPEs < 1 || c.NPEs > bootstrap.MaxNPEs:
		return bad("%d PEs, want 1..%d", c.NPEs, bootstrap.MaxNPEs)
	case c.Hosts != nil && len(c.Hosts) != c.NPEs:
		return bad("%d hosts for %d PEs", len(c.Hosts), c.NPEs)
	case c.CPUs != nil && len(c.CPUs) != c.NPEs:
		return bad("CPUs for %d PEs, want %d", len(c.CPUs), c.NPEs)
	case c.Grace < 0 || c.Timeout < 0:
		return bad("negative grace %v or timeout %v", c.Grace, c.Timeout)
	}
	seen := make(map[int]bool, len(c.Ranks))
	for _, r := range c.Ranks {
		if r < 0 || r >= c.NPEs || seen[r] {
			return bad("rank %d repeated or outside 0..%d", r, c.NPEs-1)
		}
		seen[r] = true
	}
	return nil
}

// ranks returns the ranks to start.
func (c *Config) ranks() []int {
	if c.Ranks != nil {
		return c.Ranks
	}
	all := make([]int, c.NPEs)
	for r := range all {
		all[r] = r
	}
	return all
}

// command makes PE rank's command with everything the launcher owns set.
func (c *Config) command(rank int, base []string) *exec.Cmd {
	mk := c.Command
	if mk == nil {
		mk = func(_ int, name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
	}
	cmd := mk(rank, c.Program, c.Args...)
	cmd.Env = c.env(rank, base, os.Getpid())
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Its own process group: signals reach what the PE starts (go run's
	// binary, a shell's children), and a terminal's Ctrl-C reaches only
	// the launcher, which forwards it once.
	cmd.SysProcAttr.Setpgid = true
	// The PE dies with the launcher thread that forks it (see supervise).
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	// A grandchild that keeps the output pipes open must not hold Wait.
	cmd.WaitDelay = c.Grace + time.Second
	return cmd
}

// cpus returns PE rank's CPUs, nil when unbound.
func (c *Config) cpus(rank int) []int {
	if c.CPUs == nil {
		return nil
	}
	return c.CPUs[rank]
}
