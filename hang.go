package shmem

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/goshmem/shmem/internal/core"
)

// watchSIGQUIT prints c's hang report (what it is blocked in, and on what)
// to stderr on every SIGQUIT, in place of Go's default goroutine dump and
// exit, so that an operator can ask every PE of a hung job at once
// (shmemrun forwards the signal). out is where the reports go (os.Stderr
// when Init ran). It returns the function that stops it.
func watchSIGQUIT(c *core.PE, out io.Writer) func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGQUIT)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ch:
				fmt.Fprintln(out, "goshmem hang report:", c.Report())
			case <-stop:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(stop)
		<-done
	}
}
