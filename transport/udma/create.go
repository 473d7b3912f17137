package udma

import (
	"errors"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// createFile opens a new segment file for path. Where the file system
// allows it (tmpfs has since Linux 3.11) the file has no name yet
// (O_TMPFILE, unnamed is true) and Create gives it path only once its
// header is complete (nameFile): a process killed inside Create then
// leaves nothing in /dev/shm, where a named file would stay behind empty,
// with no header to tell ReapStale whose it was. Elsewhere it is created
// under path at once, exclusively.
func createFile(path string) (fd int, unnamed bool, err error) {
	fd, err = unix.Open(filepath.Dir(path), unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return fd, true, nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return -1, false, err
	}
	fd, err = unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	return fd, false, err
}

// nameFile links the unnamed file fd at path; like O_EXCL it fails with
// EEXIST when path exists. Linking through /proc/self/fd needs no
// privilege (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
func nameFile(fd int, path string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
}
