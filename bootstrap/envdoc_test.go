package bootstrap

import (
	"strings"
	"testing"
)

// TestEnvTableNamesEveryVariable keeps the README table honest: every
// variable this package reads must appear in it.
func TestEnvTableNamesEveryVariable(t *testing.T) {
	names := []string{
		EnvUIDSessionID, EnvUIDSockIfname, EnvUniqueID, EnvUIDFile, EnvJobSecret,
		EnvMasterAddr, EnvMasterPort, EnvStoreTLSEnable, EnvLauncherPID, EnvSymmetricSize, EnvLogLevel, EnvLogPath, EnvLogToStdout,
	}
	for _, l := range launchers {
		for _, v := range []string{l.rank, l.npes, l.localRank, l.localSize} {
			if v != "" {
				names = append(names, v)
			}
		}
	}
	for _, n := range names {
		if !strings.Contains(EnvTable, "`"+n+"`") {
			t.Errorf("EnvTable does not list `%s`", n)
		}
	}
	for i, line := range strings.Split(strings.TrimSuffix(EnvTable, "\n"), "\n") {
		if !strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "|---") || !strings.HasSuffix(line, "|") || strings.Count(line, " | ") < 2 && i != 1 {
			t.Errorf("line %d is not a 3-column table row: %q", i, line)
		}
	}
}
