// Command lineloop times what a same-host barrier is made of, without
// goshmem: two processes on one shared mapping (/dev/shm) either play
// ping-pong on two words (a cache line's round trip between the cores),
// or run a 2-process barrier loop, each signalling the other's word and
// polling its own, with a locked add (the network's way, and goshmem's
// same-host barrier before session 26), an atomic store (XCHG on amd64)
// or a plain store (goshmem's now, internal/coll/signal.go).
//
// Usage (bench/NOTES.md quotes its output):
//
//	go run ./bench/lineloop [-mode pingpong|add|xchg|plain] [-n 200000]
//
// It prints the mean time of a round trip or a barrier over the last n-1000
// rounds, and for the barrier modes the milliseconds each of the first 20
// thousand rounds took: the first milliseconds of a loop run slower on
// the 2-core VMs (see "the 2-PE barrier" in bench/NOTES.md).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	mode := flag.String("mode", "pingpong", "pingpong, add, xchg or plain")
	n := flag.Int("n", 200000, "rounds")
	child := flag.String("child", "", "the mapping to join (set by the first process for the second)")
	flag.Parse()
	if err := run(*mode, uint64(*n), *child); err != nil {
		fmt.Fprintln(os.Stderr, "lineloop:", err)
		os.Exit(1)
	}
}

func run(mode string, n uint64, child string) error {
	path := child
	if path == "" {
		f, err := os.CreateTemp("/dev/shm", "lineloop-")
		if err != nil {
			return err
		}
		path = f.Name()
		defer os.Remove(path)
		if err := f.Truncate(4096); err != nil {
			return err
		}
		f.Close()
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	defer syscall.Munmap(mem)
	// Two words on lines of their own: word[r] is written by the other
	// process and polled by process r.
	word := [2]*uint64{(*uint64)(unsafe.Pointer(&mem[0])), (*uint64)(unsafe.Pointer(&mem[1024]))}
	me := 0
	var peer *exec.Cmd
	if child != "" {
		me = 1
	} else {
		peer = exec.Command(os.Args[0], "-mode", mode, "-n", fmt.Sprint(n), "-child", path)
		peer.Stderr = os.Stderr
		if err := peer.Start(); err != nil {
			return err
		}
	}
	mine, theirs := word[me], word[1-me]
	var t0 time.Time
	var chunks []float64
	tc := time.Now()
	for i := uint64(1); i <= n; i++ {
		if i == 1000 {
			t0 = time.Now()
		}
		if i%1000 == 0 && len(chunks) < 20 {
			chunks = append(chunks, float64(time.Since(tc).Microseconds())/1000)
			tc = time.Now()
		}
		switch mode {
		case "pingpong":
			if me == 0 {
				atomic.StoreUint64(theirs, i)
				for atomic.LoadUint64(mine) != i {
				}
			} else {
				for atomic.LoadUint64(mine) != i {
				}
				atomic.StoreUint64(theirs, i)
			}
			continue
		case "add":
			atomic.AddUint64(theirs, 1)
		case "xchg":
			atomic.StoreUint64(theirs, i)
		case "plain":
			plainStore(theirs, i)
		default:
			return fmt.Errorf("unknown mode %q", mode)
		}
		for atomic.LoadUint64(mine) < i {
		}
	}
	d := time.Since(t0)
	if peer == nil {
		return nil
	}
	if err := peer.Wait(); err != nil {
		return err
	}
	what := "barrier"
	if mode == "pingpong" {
		what, chunks = "round trip", nil
	}
	fmt.Printf("%s: %s %.3f µs", mode, what, float64(d.Nanoseconds())/float64(n-999)/1000)
	if chunks != nil {
		fmt.Printf("; ms per 1000, first 20: %.2f", chunks)
	}
	fmt.Println()
	return nil
}

// plainStore is a plain store, kept out of line so that the compiler
// leaves it where it is; the loop needs no ordering beyond the store's
// reaching the other process.
//
//go:noinline
func plainStore(w *uint64, v uint64) { *w = v }
