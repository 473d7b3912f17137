//go:build !race && !msan && !asan

package rdma

import (
	"syscall"
	"unsafe"
)

// sysRead and sysWrite are read(2) and write(2) on a non-blocking socket,
// as raw system calls: they never block, so they skip the runtime's
// entersyscall and exitsyscall, about 190 instructions per call
// (callgrind; a TLS get makes six of them, both nodes). Under the race
// detector (sys_race.go) they are syscall.Read and syscall.Write, whose
// annotations make the read synchronise with the peer's write (the same
// token net.Conn uses), which keeps -race tests of a whole world in one
// process meaningful; under -msan and -asan too, whose annotations mark
// the bytes read as written.
//
// On an error n is 0 and err a syscall.Errno.
func sysRead(fd int, p []byte) (n int, err error) { return rawIO(syscall.SYS_READ, fd, p) }

func sysWrite(fd int, p []byte) (n int, err error) { return rawIO(syscall.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2) (trap) of p on fd as one raw system call.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	r, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(ptr), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
