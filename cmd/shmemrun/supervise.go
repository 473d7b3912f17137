package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/goshmem/shmem/internal/affinity"
)

// supervisor runs the PEs of one job and decides when to stop them.
type supervisor struct {
	c      config
	env    func(rank int) []string
	stdout *sink
	stderr *sink
	log    io.Writer // shmemrun's own messages
	sigs   <-chan os.Signal
	cpus   [][]int // CPUs of each rank (-bind-to), or nil
}

// pe is one started PE process; its process group holds whatever it
// starts (go run's binary, a shell's children), so signals go to the group.
type pe struct {
	rank  int
	cmd   *exec.Cmd
	ended bool
}

// run starts every PE, forwards signals, stops the rest at the first
// failure (SIGTERM, then SIGKILL after the grace period) and returns the
// job's exit status once every PE has ended.
func (s *supervisor) run() int {
	pes := make([]*pe, 0, s.c.NP)
	ends := make(chan end, s.c.NP)
	t := newTally(s.c.NP)
	for r := 0; r < s.c.NP; r++ {
		p, err := s.start(r, ends)
		if err != nil {
			fmt.Fprintf(s.log, "shmemrun: starting PE %d: %v\n", r, err)
			for _, q := range pes {
				q.signal(syscall.SIGKILL)
			}
			for range pes {
				<-ends
			}
			return 127
		}
		pes = append(pes, p)
	}
	var grace <-chan time.Time
	stopping := false
	stop := func(sig syscall.Signal) {
		for _, p := range pes {
			if !p.ended {
				p.signal(sig)
			}
		}
		if !stopping {
			stopping = true
			grace = time.After(s.c.Grace)
		}
	}
	for !t.done() {
		select {
		case e := <-ends:
			pes[e.Rank].ended = true
			if s.c.Verbose {
				fmt.Fprintf(s.log, "shmemrun: %v\n", e)
			}
			// After an interrupt the PEs are already being stopped.
			if t.record(e) && !stopping {
				fmt.Fprintf(s.log, "shmemrun: %v; stopping the other PEs\n", e)
				stop(syscall.SIGTERM)
			}
		case sig := <-s.sigs:
			if stopping {
				// A second interrupt: the user wants out now.
				stop(syscall.SIGKILL)
				continue
			}
			fmt.Fprintf(s.log, "shmemrun: %v: forwarding to the PEs\n", sig)
			if ss, ok := sig.(syscall.Signal); ok {
				stop(ss)
			} else {
				stop(syscall.SIGTERM)
			}
		case <-grace:
			grace = nil
			for _, p := range pes {
				if !p.ended {
					fmt.Fprintf(s.log, "shmemrun: PE %d still running after %v: killing it\n", p.rank, s.c.Grace)
					p.signal(syscall.SIGKILL)
				}
			}
		}
	}
	if st := t.status(); st != 0 {
		fmt.Fprintf(s.log, "shmemrun: job failed: %s\n", t.failure())
		return st
	}
	return 0
}

func (s *supervisor) start(rank int, ends chan<- end) (*pe, error) {
	cmd := exec.Command(s.c.Prog, s.c.Args...)
	cmd.Env = s.env(rank)
	prefix := "[PE " + strconv.Itoa(rank) + "] "
	out, errw := newPrefixer(prefix, s.stdout), newPrefixer(prefix, s.stderr)
	cmd.Stdout, cmd.Stderr = out, errw
	// Its own process group: signals reach what the PE starts, and a
	// terminal's Ctrl-C reaches only shmemrun, which forwards it once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A grandchild that keeps the output pipes open must not hold Wait.
	cmd.WaitDelay = s.c.Grace + time.Second
	var cpus []int
	if s.cpus != nil {
		cpus = s.cpus[rank]
	}
	if err := affinity.Start(cmd, cpus); err != nil {
		return nil, err
	}
	if s.c.Verbose {
		fmt.Fprintf(s.log, "shmemrun: PE %d is pid %d\n", rank, cmd.Process.Pid)
	}
	go func() {
		err := cmd.Wait()
		out.Close()
		errw.Close()
		ends <- endOf(rank, cmd.ProcessState, err)
	}()
	return &pe{rank: rank, cmd: cmd}, nil
}

// signal sends sig to the PE's process group.
func (p *pe) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.cmd.Process.Pid, sig)
}

// endOf turns a finished command into an end.
func endOf(rank int, ps *os.ProcessState, err error) end {
	if ps == nil {
		return end{Rank: rank, Code: 1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return end{Rank: rank, Code: -1, Signal: ws.Signal()}
	}
	code := ps.ExitCode()
	if code == 0 && err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		code = 1
	}
	return end{Rank: rank, Code: code}
}
