package udma

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/goshmem/shmem/internal/errs"
)

// SegmentInfo describes one goshmem segment file found in /dev/shm.
type SegmentInfo struct {
	Name string // path in /dev/shm
	Job  string // from the file name
	Rank int    // from the file name
	Size int64  // file size in bytes
	// Valid reports a regular file of this user whose header decodes and
	// agrees with its name and size; the fields below are set only then.
	Valid      bool
	Ready      bool  // the owner finished Create
	State      State // the owner's last published state
	Heap       int64 // heap bytes
	OwnerPID   int
	OwnerAlive bool // the owner process still runs (same pid namespace)
}

// List describes the segments of job in /dev/shm, in name order; an empty
// job lists every goshmem segment. It reads headers with pread and never
// maps, follows a symlink or changes anything.
func List(job string) ([]SegmentInfo, error) {
	if job != "" {
		if err := checkJob(job); err != nil {
			return nil, errs.New("udma.List", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%v", err)
		}
	}
	ents, err := os.ReadDir(Dir)
	if err != nil {
		return nil, errs.New("udma.List", errs.NoPE, errs.NoPE, osErr("read "+Dir, err), "")
	}
	var out []SegmentInfo
	for _, e := range ents {
		j, rank, ok := parseName(e.Name())
		if !ok || (job != "" && j != job) {
			continue
		}
		info, _ := inspect(Dir+"/"+e.Name(), j, rank)
		out = append(out, info)
	}
	return out, nil
}

// Reap removes every segment name of job from /dev/shm whatever its state
// and returns how many it removed. The launcher calls it when it exits or is
// interrupted; processes that still map a segment keep their mapping.
func Reap(job string) (removed int, err error) {
	if err := checkJob(job); err != nil {
		return 0, errs.New("udma.Reap", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%v", err)
	}
	ents, err := os.ReadDir(Dir)
	if err != nil {
		return 0, errs.New("udma.Reap", errs.NoPE, errs.NoPE, osErr("read "+Dir, err), "")
	}
	var failed []error
	for _, e := range ents {
		if j, _, ok := parseName(e.Name()); !ok || j != job || e.IsDir() {
			continue
		}
		// unlink removes a symlink itself, never its target.
		switch err := unix.Unlink(Dir + "/" + e.Name()); {
		case err == nil:
			removed++
		case !errors.Is(err, unix.ENOENT): // ENOENT: a PE unlinked it first
			failed = append(failed, osErr("unlink "+e.Name(), err))
		}
	}
	if len(failed) > 0 {
		return removed, errs.New("udma.Reap", errs.NoPE, errs.NoPE, errors.Join(failed...), "job %s", job)
	}
	return removed, nil
}

// ReapStale removes the goshmem segments of any job whose owner process has
// died (or whose pid now belongs to a younger process) and returns how many
// it removed. It touches only regular files of this user whose header is
// valid, so a live segment, a foreign file or a symlink is never removed.
// Create leaves no file behind when its process dies inside it on tmpfs
// (createFile); elsewhere such a file has no valid header and is left for
// Reap(job). PEs in another pid namespace that
// share /dev/shm look dead to it: do not run it across containers.
func ReapStale() (removed int, err error) {
	ents, err := os.ReadDir(Dir)
	if err != nil {
		return 0, errs.New("udma.ReapStale", errs.NoPE, errs.NoPE, osErr("read "+Dir, err), "")
	}
	var failed []error
	for _, e := range ents {
		job, rank, ok := parseName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		path := Dir + "/" + e.Name()
		info, st := inspect(path, job, rank)
		if !info.Valid || info.OwnerAlive {
			continue
		}
		// Remove the name only if it still is the file we inspected.
		var now unix.Stat_t
		if unix.Lstat(path, &now) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
			continue
		}
		switch err := unix.Unlink(path); {
		case err == nil:
			removed++
		case !errors.Is(err, unix.ENOENT):
			failed = append(failed, osErr("unlink "+e.Name(), err))
		}
	}
	if len(failed) > 0 {
		return removed, errs.New("udma.ReapStale", errs.NoPE, errs.NoPE, errors.Join(failed...), "")
	}
	return removed, nil
}

// ShmInfo reports the size of /dev/shm and the bytes still free for an
// unprivileged user.
func ShmInfo() (total, free int64, err error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(Dir, &fs); err != nil {
		return 0, 0, errs.New("udma.ShmInfo", errs.NoPE, errs.NoPE, osErr("statfs "+Dir, err), "")
	}
	bs := int64(fs.Bsize)
	return int64(fs.Blocks) * bs, int64(fs.Bavail) * bs, nil
}

// parseName splits "goshmem-<job>-<rank>"; the rank is the text after the
// last '-' and must be canonical decimal, so each name has one reading.
func parseName(name string) (job string, rank int, ok bool) {
	rest, found := strings.CutPrefix(name, namePrefix)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return "", 0, false
	}
	job, num := rest[:i], rest[i+1:]
	if checkJob(job) != nil || num == "" || len(num) > 1 && num[0] == '0' {
		return "", 0, false
	}
	r, err := strconv.Atoi(num)
	if err != nil || r < 0 || strconv.Itoa(r) != num {
		return "", 0, false
	}
	return job, r, true
}

// inspect reads the header of one segment file without mapping it or
// following a symlink, and returns what it found and the file's identity.
func inspect(path, job string, rank int) (SegmentInfo, unix.Stat_t) {
	info := SegmentInfo{Name: path, Job: job, Rank: rank}
	var st unix.Stat_t
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return info, st
	}
	defer unix.Close(fd)
	if unix.Fstat(fd, &st) != nil {
		return info, st
	}
	info.Size = st.Size
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Size < HeaderSize {
		return info, st
	}
	var buf [hdrUsed]byte
	n, err := unix.Pread(fd, buf[:], 0)
	if err != nil {
		return info, st
	}
	h, err := parseHeader(buf[:n])
	if err != nil || h.rank != uint64(rank) || st.Size != HeaderSize+int64(h.heap) {
		return info, st
	}
	info.Valid = true
	info.Ready = h.ready
	info.State = h.state
	info.Heap = int64(h.heap)
	info.OwnerPID = h.pid
	info.OwnerAlive = processAlive(h.pid, h.start)
	return info, st
}

// processAlive reports whether pid runs and, when start is known, is the
// process that started at that time rather than a successor reusing the pid.
// A zombie counts as dead. Doubt (no /proc, no permission) counts as alive.
func processAlive(pid int, start uint64) bool {
	if pid <= 0 {
		return false // kill(0) and kill(-n) address process groups
	}
	if err := unix.Kill(pid, 0); errors.Is(err, unix.ESRCH) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	state, st, ok := parseStat(b)
	if !ok {
		return true
	}
	if state == 'Z' || state == 'X' {
		return false
	}
	return start == 0 || st == start
}

// procStart returns the start time of pid in clock ticks since boot, from
// /proc/<pid>/stat.
func procStart(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	_, st, ok := parseStat(b)
	return st, ok
}

// parseStat extracts the state (field 3) and start time (field 22) from a
// /proc/<pid>/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from its last ')'.
func parseStat(b []byte) (state byte, start uint64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	const stateIdx, startIdx = 0, 22 - 3
	if len(f) <= startIdx || len(f[stateIdx]) != 1 {
		return 0, 0, false
	}
	start, err := strconv.ParseUint(string(f[startIdx]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return f[stateIdx][0], start, true
}
