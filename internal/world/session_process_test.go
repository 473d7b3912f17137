package world_test

import (
	"net"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/launch"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// sessionJob runs n test PEs as CANN SHMEM's scripts start ranks: a rank
// and size (goshmem's launcher) and SHMEM_UID_SESSION_ID, no unique ID,
// plus env. It returns every PE's exit code and output.
func sessionJob(t *testing.T, n int, env ...string) ([]int, []string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0") // a port free now, on loopback
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return runPEsOf(t, peBinary, launch.Config{NPEs: n, RankEnv: func(int) []string {
		// The test process's own variables must not leak in: no secret
		// and TLS on unless env says otherwise.
		return append([]string{lt.EnvRole + "=" + lt.RoleSPMD, "SHMEM_SYMMETRIC_SIZE=8m",
			"SHMEM_UID_SESSION_ID=" + addr, "SHMEM_JOB_SECRET=", "SMEM_CONF_STORE_TLS_ENABLE="}, env...)
	}})
}

func TestSessionStartTLSOnBySecret(t *testing.T) {
	codes, outs := sessionJob(t, 3, "SHMEM_JOB_SECRET=session-test")
	expectAll(t, codes, outs, 0)
	for r, o := range outs {
		if strings.Contains(o, "TLS is off") {
			t.Errorf("PE %d ran without TLS:\n%s", r, o)
		}
	}
}

func TestSessionStartTLSOffByCANNSwitch(t *testing.T) {
	codes, outs := sessionJob(t, 2, "SMEM_CONF_STORE_TLS_ENABLE=0")
	expectAll(t, codes, outs, 0)
	if !strings.Contains(outs[0], "TLS is off") {
		t.Errorf("PE 0 did not warn that TLS is off:\n%s", outs[0])
	}
}

// shmem.WithoutTLS (the test PE's TEST_NO_TLS) is the user's word too.
func TestSessionStartTLSOffByWithoutTLS(t *testing.T) {
	codes, outs := sessionJob(t, 2, lt.EnvNoTLS+"=1")
	expectAll(t, codes, outs, 0)
}

func TestSessionStartNeedsSecretOrSwitch(t *testing.T) {
	codes, outs := sessionJob(t, 2)
	for r, c := range codes {
		if c == 0 {
			t.Errorf("PE %d started without a secret or a TLS switch", r)
		}
		for _, want := range []string{"rank " + string(rune('0'+r)) + " of 2", "set SHMEM_JOB_SECRET", "SMEM_CONF_STORE_TLS_ENABLE=0"} {
			if !strings.Contains(outs[r], want) {
				t.Errorf("PE %d's error lacks %q:\n%s", r, want, outs[r])
			}
		}
	}
}
