package bootstrap

import (
	"os"
	"strings"
	"testing"
)

// TestEnvTableNamesEveryVariable keeps the README table honest: every
// variable this package reads must appear in it.
func TestEnvTableNamesEveryVariable(t *testing.T) {
	names := []string{
		EnvUIDSessionID, EnvUIDSockIfname, EnvUniqueID, EnvUIDFile, EnvJobSecret,
		EnvMasterAddr, EnvMasterPort, EnvStoreTLSEnable, EnvLauncherPID, EnvStatusFD, EnvSymmetricSize, EnvLogLevel, EnvLogPath, EnvLogToStdout,
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

// TestReadmeCarriesEnvTable: README.md's table of variables is EnvTable,
// verbatim, so the two cannot drift apart (they had: two rows differed and
// four variables were in the README only).
func TestReadmeCarriesEnvTable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n"+EnvTable+"\n") {
		t.Error("README.md does not carry bootstrap.EnvTable verbatim (with a blank line after it): copy the table from `shmem-config --env` into the README, or the README's rows into envdoc.go")
	}
}
