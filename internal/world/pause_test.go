package world_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// TestProcessPause stops PE 2 (SIGSTOP: a debugger, a VM pause, a cgroup
// freeze) in the middle of a loop of collectives over TCP. A pause
// shorter than the failure bound (SHMEM_FAILURE_TIMEOUT) is survived: the
// loop runs on and every PE ends cleanly. A longer one fails the job,
// every survivor naming the paused PE, never a healthy one.
func TestProcessPause(t *testing.T) {
	cases := []struct {
		name  string
		pause time.Duration
		bound string
		fails bool
	}{
		{"1s within the default bound", time.Second, "3s", false},
		{"3s within a bound of 5s", 3 * time.Second, "5s", false},
		{"6s beyond the default bound", 6 * time.Second, "3s", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uid := lt.LoopbackUID(t, false)
			lines := make(chan string, 1024)
			j, err := launch.Start(launch.Config{Program: peBinary, NPEs: 3, UniqueID: uid.String(), Capture: true, Stdin: true,
				Timeout: procTimeout,
				RankEnv: func(r int) []string {
					return []string{lt.EnvRole + "=" + lt.RolePauseLoop, lt.EnvWho + "=2", "SHMEM_TRANSPORT=tcp",
						"SHMEM_SYMMETRIC_SIZE=8m", "SHMEM_FAILURE_TIMEOUT=" + c.bound}
				},
				OnLine: func(rank int, line string) {
					if rank == 2 {
						select {
						case lines <- line:
						default:
						}
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			waitLine := func(prefix string) {
				for l := range lines {
					if strings.HasPrefix(l, prefix) {
						return
					}
				}
			}
			waitLine(lt.Looping)
			if err := j.PE(2).Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(c.pause) // the pause under test, not a synchronization
			if err := j.PE(2).Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			if !c.fails {
				// Drop what PE 2 printed before the pause, then wait for
				// the loop to run again before stopping it.
				for len(lines) > 0 {
					<-lines
				}
				waitLine(lt.Looping)
				j.PE(0).Stdin().Close()
			}
			res := j.Wait()
			for r, e := range res.Ends {
				out := j.PE(r).Output()
				switch {
				case !c.fails && e.Code != lt.ExitOK:
					t.Errorf("PE %d exited %d after a %v pause of PE 2 (bound %s):\n%s", r, e.Code, c.pause, c.bound, out)
				case c.fails && r != 2 && (e.Code != lt.ExitPEFailed || !strings.Contains(out, "PE 2")):
					t.Errorf("survivor PE %d exited %d, want %d naming PE 2:\n%s", r, e.Code, lt.ExitPEFailed, out)
				}
			}
		})
	}
}
