package bootstrap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// The unique ID file (SHMEM_UID_FILE) carries the job secret, and may
// live in a directory other users can write (/tmp, a group's project
// directory). Another user must neither read the secret through a file it
// planted (a world-writable path+".tmp" that a plain create would
// truncate and fill) nor hand the ranks an ID of its own (a file at path
// that they would read and join), nor make them read without end (a
// symlink to /dev/zero).

// writeUIDTemp writes b to a new file beside path, created exclusively
// under a random name, readable by its owner only, and returns its name.
func writeUIDTemp(path string, b []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// errForeignUIDFile marks a unique ID file that this process must not
// trust; waiting longer does not change it.
var errForeignUIDFile = errors.New("not a unique ID file of this user")

// readUIDFile reads the ID file at path: a regular file owned by this
// process's user, no longer than an ID and its line end. A missing file
// is fs.ErrNotExist (not written yet); any other file is
// errForeignUIDFile, saying what it is.
func readUIDFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	limit := int64(maxUniqueIDLen + 2)
	switch st, ok := fi.Sys().(*syscall.Stat_t); {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%w: %s is not a regular file (%v)", errForeignUIDFile, path, fi.Mode().Type())
	case ok && int(st.Uid) != os.Geteuid():
		return nil, fmt.Errorf("%w: %s is owned by uid %d, not by this process's %d, so another user could have written it", errForeignUIDFile, path, st.Uid, os.Geteuid())
	case fi.Size() > limit:
		return nil, fmt.Errorf("%w: %s is %d bytes, longer than any unique ID", errForeignUIDFile, path, fi.Size())
	}
	return io.ReadAll(io.LimitReader(f, limit))
}
