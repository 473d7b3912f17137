package launch

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/affinity"
	"github.com/goshmem/shmem/internal/pestatus"
)

// Job is a started job: its PEs run until each ends, and Wait returns how.
// Its methods may be called from any goroutine.
type Job struct {
	cfg      Config
	procs    []*Proc // the started PEs in the order of cfg.ranks(); fixed once Start returns
	outMu    sync.Mutex
	killOnce sync.Once
	killc    chan struct{}
	done     chan struct{}
	result   Result // written by the supervisor before done closes
}

// Proc is one PE process of a Job.
type Proc struct {
	rank, pid int
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	mu        sync.Mutex
	out       bytes.Buffer // captured lines (Config.Capture)
	done      chan struct{}
	end       End // written before done closes
}

// Start starts every PE cfg describes and returns once all have started.
// If one cannot be started, the PEs already started are killed and reaped
// and the error names the PE; errors of a bad cfg wrap
// errs.ErrInvalidArgument. The caller must Wait (or watch Done) for the
// job to end: the goroutine that supervises it lives until every PE has
// ended.
func Start(cfg Config) (*Job, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	j := &Job{cfg: cfg, killc: make(chan struct{}), done: make(chan struct{})}
	started := make(chan error, 1)
	go j.supervise(started)
	if err := <-started; err != nil {
		<-j.done
		return nil, err
	}
	return j, nil
}

// Run starts the job cfg describes and waits for it to end.
func Run(cfg Config) (Result, error) {
	j, err := Start(cfg)
	if err != nil {
		return Result{}, err
	}
	return j.Wait(), nil
}

// supervise starts the PEs and watches them until all have ended.
//
// Every PE is started with a parent-death signal, which Linux sends when
// the *thread* that forked it ends, not the process. A Go thread ends when
// a goroutine locked to it returns (affinity binding used to do exactly
// that), and an unlocked goroutine may fork from a thread that another
// goroutine later locks and ends with: its PEs would be killed with no
// launcher gone. So supervise locks itself to its thread, forks every PE
// from it, and keeps it until the last PE has ended; only then does it
// unlock (or, if the thread's CPU mask could not be restored, end locked so
// the runtime discards the thread).
func (j *Job) supervise(started chan<- error) {
	runtime.LockOSThread()
	clean := true
	defer func() {
		if clean {
			runtime.UnlockOSThread()
		}
		close(j.done)
	}()
	base := j.cfg.Env
	if base == nil {
		base = os.Environ()
	}
	ranks := j.cfg.ranks()
	// Every PE's end and reports arrive here; the supervisor reads until
	// each end has, so no sender blocks for good.
	events := make(chan event, len(ranks))
	for _, r := range ranks {
		p, err := j.start(r, base, events, &clean)
		if err != nil {
			for _, q := range j.procs {
				_ = q.signal(syscall.SIGKILL)
			}
			for n := 0; n < len(j.procs); {
				if ev := <-events; ev.end != nil {
					n++
				}
			}
			started <- fmt.Errorf("launch: starting PE %d: %w", r, err)
			return
		}
		j.procs = append(j.procs, p)
	}
	started <- nil
	j.result = j.watch(events)
}

// event is what the supervisor hears of a PE: a report while it runs (end
// nil), or its end, which comes after every report of that PE.
type event struct {
	rank   int
	report pestatus.Report
	end    *End
}

// statusDrain bounds how long a PE's end waits, once its process has
// ended, for the reports it wrote before: they are in the socket already,
// so only a process it left behind holding the socket (started before
// Init marked it close-on-exec, or by a program without goshmem) makes
// the wait last, and what that process writes is not the PE's.
const statusDrain = 100 * time.Millisecond

// start starts PE rank; its reports and end arrive on events.
func (j *Job) start(rank int, base []string, events chan<- event, clean *bool) (*Proc, error) {
	c := &j.cfg
	cmd := c.command(rank, base)
	p := &Proc{rank: rank, cmd: cmd, done: make(chan struct{})}
	// A PE's status socket; without one (out of descriptors) the PE runs
	// as before, its ends judged by their order alone.
	status, peStatus, err := pestatus.Pair()
	if err == nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, peStatus)
		// Last in the environment, which exec dedups keeping the last.
		cmd.Env = append(cmd.Env, bootstrap.EnvStatusFD+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
		defer peStatus.Close() // the PE has its copy once started
	} else {
		j.logf("PE %d starts without a status socket: %v", rank, err)
	}
	var writers []*lineWriter
	if w := j.streamWriter(p, c.Stdout); w != nil {
		cmd.Stdout, writers = w, append(writers, w)
	}
	if w := j.streamWriter(p, c.Stderr); w != nil {
		cmd.Stderr, writers = w, append(writers, w)
	}
	if c.Stdin {
		var err error
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			return nil, err
		}
	}
	startErr, restoreErr := affinity.StartLocked(cmd, c.cpus(rank))
	if restoreErr != nil {
		*clean = false
		j.logf("binding PE %d: %v", rank, restoreErr)
	}
	if startErr != nil {
		if status != nil {
			status.Close()
		}
		return nil, startErr
	}
	p.pid = cmd.Process.Pid
	if c.Verbose {
		j.logf("PE %d is pid %d", rank, p.pid)
	}
	var reported pestatus.Report
	scanned := make(chan struct{})
	if status != nil {
		go func() {
			defer close(scanned)
			reported = pestatus.Scan(status, rank, c.NPEs, func(rep pestatus.Report) {
				events <- event{rank: rank, report: rep}
			})
		}()
	} else {
		close(scanned)
	}
	go func() {
		err := cmd.Wait()
		for _, w := range writers {
			_ = w.Close()
		}
		if status != nil {
			_ = status.SetReadDeadline(time.Now().Add(statusDrain))
			<-scanned
			status.Close()
		}
		p.end = endOf(rank, p.pid, cmd.ProcessState, err)
		p.end.Reported = reported
		close(p.done)
		events <- event{rank: rank, end: &p.end}
	}()
	return p, nil
}

func (j *Job) logf(format string, args ...any) {
	if j.cfg.Logf != nil {
		j.cfg.Logf(format, args...)
	}
}

// Procs returns the started PEs in the order of Config.Ranks (rank order
// by default).
func (j *Job) Procs() []*Proc { return j.procs }

// PE returns the process of PE rank, or nil when this job did not start it.
func (j *Job) PE(rank int) *Proc {
	for _, p := range j.procs {
		if p.rank == rank {
			return p
		}
	}
	return nil
}

// Kill sends SIGKILL to every PE still running, at once (no grace). The
// job then ends as usual; Wait reports the PEs as killed.
func (j *Job) Kill() { j.killOnce.Do(func() { close(j.killc) }) }

// Done is closed when every PE has ended.
func (j *Job) Done() <-chan struct{} { return j.done }

// Wait waits for every PE to end and returns how the job ended.
func (j *Job) Wait() Result {
	<-j.done
	return j.result
}

// Rank is the PE's rank.
func (p *Proc) Rank() int { return p.rank }

// Pid is the PE's process id; it leads the PE's process group.
func (p *Proc) Pid() int { return p.pid }

// Signal sends sig to the PE's process group (the PE and what it
// started). It returns os.ErrProcessDone once the PE has been reaped, when
// its pid may already belong to another process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.signal(sig) }

func (p *Proc) signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return os.ErrProcessDone
	default:
	}
	return syscall.Kill(-p.pid, sig)
}

// Stdin is the write end of the PE's standard input with Config.Stdin, nil
// without. Closing it gives the PE end of file.
func (p *Proc) Stdin() io.WriteCloser { return p.stdin }

// Output is what the PE has written so far on stdout and stderr, line by
// line as it arrived (Config.Capture; empty without).
func (p *Proc) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Done is closed when the PE has ended.
func (p *Proc) Done() <-chan struct{} { return p.done }

// End waits for the PE to end and returns how it ended.
func (p *Proc) End() End {
	<-p.done
	return p.end
}
