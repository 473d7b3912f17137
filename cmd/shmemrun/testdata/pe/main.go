// Command pe is the program shmemrun's integration tests launch. -mode:
//
//	ok:      print "hello r of n", BarrierAll, Finalize, exit 0
//	fail:    PE -who exits 5 after a barrier; the others print
//	         "ready pid=P", ignore SIGTERM and block, so only SIGKILL ends them
//	exit:    PE -who calls GlobalExit(9) after a barrier; all block
//	hang:    each PE leaves a segment of its job in /dev/shm (as a crash
//	         in start-up would), prints "ready pid=P" and blocks
//	cpus:    print "cpus=LIST" (the CPUs the PE may run on), Finalize
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/transport/udma"
)

func main() {
	mode := flag.String("mode", "ok", "ok, fail, exit or hang")
	who := flag.Int("who", 1, "the PE that fails or calls GlobalExit")
	flag.Parse()
	if err := run(*mode, *who); err != nil {
		fmt.Fprintln(os.Stderr, "pe:", err)
		os.Exit(1)
	}
}

func run(mode string, who int) error {
	p, err := shmem.Init(context.Background(), shmem.WithHeapSize(1<<20))
	if err != nil {
		return err
	}
	me, n := p.MyPE(), p.NPEs()
	if err := p.BarrierAll(); err != nil {
		return err
	}
	switch mode {
	case "ok":
		fmt.Printf("hello %d of %d\n", me, n)
		fmt.Fprintf(os.Stderr, "stderr line from %d\n", me)
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return p.Finalize()
	case "fail":
		if me == who {
			os.Exit(5)
		}
		signal.Ignore(syscall.SIGTERM)
		fmt.Printf("ready pid=%d\n", os.Getpid())
	case "exit":
		if me == who {
			p.GlobalExit(9)
		}
	case "cpus":
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		for _, l := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
				fmt.Printf("cpus=%s\n", strings.TrimSpace(v))
			}
		}
		return p.Finalize()
	case "hang":
		uid, err := shmem.ParseUniqueID(os.Getenv("SHMEM_UNIQUE_ID"))
		if err != nil {
			return err
		}
		if _, err := udma.Create(uid.JobName(), n+me, 4096); err != nil {
			return err
		}
		fmt.Printf("ready pid=%d job=%s\n", os.Getpid(), uid.JobName())
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	select {}
}
