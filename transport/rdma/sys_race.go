//go:build race || msan || asan

package rdma

import "syscall"

// See sys_norace.go.

func sysRead(fd int, p []byte) (int, error) {
	n, err := syscall.Read(fd, p)
	if err != nil {
		return 0, err
	}
	return n, nil
}

func sysWrite(fd int, p []byte) (int, error) {
	n, err := syscall.Write(fd, p)
	if err != nil {
		return 0, err
	}
	return n, nil
}
