package pe

import "golang.org/x/sys/unix"

// osYield gives the CPU to another runnable thread of any process: a PE in
// another process on the same core can then make the progress this PE
// waits for. runtime.Gosched yields only to goroutines of this process.
func osYield() { _, _, _ = unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
