package transport

import "golang.org/x/sys/unix"

// OSYield gives the CPU to another runnable thread of any process: a PE in
// another process on the same core can then make the progress a polling
// caller waits for. runtime.Gosched yields only to goroutines of this
// process.
func OSYield() { _, _, _ = unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
