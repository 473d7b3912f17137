package launch

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// envHelper makes this test binary a launcher of its own (helperLauncher),
// for TestPEsDieWithTheLauncher.
const envHelper = "GOSHMEM_LAUNCH_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) != "" {
		os.Exit(helperLauncher())
	}
	goleak.VerifyTestMain(m)
}

// helperLauncher starts two PEs that sleep, prints their pids and blocks
// until its stdin closes or it is killed.
func helperLauncher() int {
	j, err := Start(Config{Program: "sleep", Args: []string{"3600"}, NPEs: 2})
	if err != nil {
		fmt.Println("ERROR", err)
		return 1
	}
	for _, p := range j.Procs() {
		fmt.Println("PID", p.Pid())
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	j.Kill()
	j.Wait()
	return 0
}

// alive reports whether pid is a process that has not died: a zombie
// waiting for its new parent to reap it counts as dead.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
