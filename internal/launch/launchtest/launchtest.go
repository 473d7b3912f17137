// Package launchtest is what process tests share: the switch that says
// whether PE programs are built with the race detector, the builder of the
// one test PE program (internal/launch/testpe), and the roles, variables
// and exit codes that program understands.
package launchtest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goshmem/shmem"
)

// PEPackage is the import path of the test PE program.
const PEPackage = "github.com/goshmem/shmem/internal/launch/testpe"

// BuildPE builds the test PE program into dir, with the build tags given
// (goshmem_fabric, say), and returns its path. It is built with -race
// when this binary has the race detector, so every PE of a race-enabled
// test run is checked too.
func BuildPE(dir string, tags ...string) (string, error) {
	name := "testpe"
	if len(tags) > 0 {
		name += "-" + strings.Join(tags, "-")
	}
	return build(dir, name, PEPackage, RaceEnabled, tags)
}

// BuildLauncher builds the launcher command pkg (shmemrun, say) into dir
// and returns its path. It runs no PE, so it is built with -race whenever
// this binary has the race detector.
func BuildLauncher(dir, pkg string) (string, error) {
	return build(dir, filepath.Base(pkg), pkg, RaceEnabled, nil)
}

func build(dir, name, pkg string, race bool, tags []string) (string, error) {
	args := []string{"build"}
	if race {
		args = append(args, "-race")
	}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	bin := filepath.Join(dir, name)
	args = append(args, "-o", bin, pkg)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// LoopbackUID makes a unique ID whose rendezvous is on 127.0.0.1, with
// TLS unless noTLS, for a job of PE processes on this host. It sets
// SHMEM_UID_SESSION_ID for the test (GetUniqueID reads it), so the test
// must not be parallel.
func LoopbackUID(t testing.TB, noTLS bool) shmem.UniqueID {
	t.Helper()
	t.Setenv("SHMEM_UID_SESSION_ID", "127.0.0.1:0")
	var opts []shmem.Option
	if noTLS {
		opts = append(opts, shmem.WithoutTLS())
	}
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return uid
}
