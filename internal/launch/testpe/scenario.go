package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/failcheck"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// scenario runs the failure scenario name (internal/failcheck) on p and
// prints what this PE got, for the test to compare with the table:
// "RESULT body=<class> fin=<class> err=<quoted error>". A PE the scenario
// kills exits with failcheck.Died without Finalize. It ignores SIGTERM:
// shmemrun stops the other PEs 200 ms after one failed, and a survivor
// slower than that (-race, a loaded machine) must still report what it
// got; shmemrun's SIGKILL after its grace period ends one that hangs.
func scenario(p *shmem.PE, name string) error {
	signal.Ignore(syscall.SIGTERM)
	for _, sc := range failcheck.Scenarios() {
		if sc.Name != name {
			continue
		}
		err := runBody(p, sc.Body)
		fin := p.Finalize()
		printResult(err, fin)
		return nil
	}
	return fmt.Errorf("no scenario %q", name)
}

// giveUp is RoleGiveUp: PE who, whose operations time out, gives up
// BarrierAll and Finalize while the others wait for its departure (the
// file EnvMark, which it creates after its Finalize, which released
// everything and ended its links); then they call BarrierAll and
// Finalize. Every PE prints its RESULT line as a scenario does. SIGTERM
// is ignored for the same reason.
func giveUp(p *shmem.PE) error {
	signal.Ignore(syscall.SIGTERM)
	mark := os.Getenv(lt.EnvMark)
	if mark == "" {
		return fmt.Errorf("%s is not set", lt.EnvMark)
	}
	if p.MyPE() != who(p) {
		// Busy in its own code, not in goshmem, until the PE has left.
		for {
			if _, err := os.Stat(mark); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	err := p.BarrierAll()
	fin := p.Finalize()
	printResult(err, fin)
	if p.MyPE() == who(p) {
		return os.WriteFile(mark, nil, 0o600)
	}
	return nil
}

func runBody(p *shmem.PE, body func(*shmem.PE) error) error {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(failcheck.Death); ok {
				os.Exit(failcheck.Died)
			}
			panic(v)
		}
	}()
	return body(p)
}

// printResult prints the RESULT line of a body's error and Finalize's
// (and Finalize's text), which the failure tests parse.
func printResult(err, fin error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	fmt.Printf("RESULT body=%s fin=%s err=%s\n", failcheck.ClassOf(err), failcheck.ClassOf(fin), strconv.Quote(msg))
	if fin != nil {
		fmt.Printf("FINALIZE %s\n", strconv.Quote(fin.Error()))
	}
}
