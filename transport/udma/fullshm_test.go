package udma

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// fullShmRole names the child that runs inside a private mount namespace
// whose /dev/shm is a 1 MiB tmpfs.
const fullShmRole = "GOSHMEM_UDMA_TEST_FULLSHM"

// TestFullShmIsAnError: PEs that each fit /dev/shm but together overfill
// it get ErrOutOfMemory from Create, naming the size and the free space,
// instead of a SIGBUS when a page is first touched. It runs the check in a
// private mount namespace (unshare -m) with a small tmpfs, as root on CI.
func TestFullShmIsAnError(t *testing.T) {
	if os.Getenv(fullShmRole) != "" {
		fullShmChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private mount namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1)")
	}
	cmd := exec.Command(unshare, "-m", "--propagation", "private", "sh", "-c",
		"mount -t tmpfs -o size=1m tmpfs /dev/shm && exec \"$0\" -test.run '^TestFullShmIsAnError$' -test.v", os.Args[0])
	cmd.Env = append(os.Environ(), fullShmRole+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if strings.Contains(string(out), "mount:") || strings.Contains(string(out), "unshare:") {
			t.Skipf("no private mount namespace here: %s", out)
		}
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("child did not pass:\n%s", out)
	}
}

func fullShmChild(t *testing.T) {
	_, free, err := ShmInfo()
	if err != nil || free > 1<<20 {
		t.Fatalf("child's /dev/shm is not the 1 MiB tmpfs: free %d, %v", free, err)
	}
	const heap = 600 << 10 // each fits alone, two do not
	a, err := Create("fullshm", 0, heap)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// Touch every page of the first: reserved, so no fault.
	for i := 0; i < heap; i += 4096 {
		a.Heap()[i] = 1
	}
	_, err = Create("fullshm", 1, heap)
	if !errors.Is(err, errs.ErrOutOfMemory) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("second segment: %v, want ErrOutOfMemory naming the free space", err)
	}
	if _, err := os.Stat(segPath("fullshm", 1)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused segment's file is left behind: %v", err)
	}
	t.Log(err)
}
