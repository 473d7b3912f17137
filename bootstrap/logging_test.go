package bootstrap

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
)

// logAll writes one line at each level and closes the logger.
func logAll(t *testing.T, getenv func(string) string, stdout, stderr *bytes.Buffer) {
	t.Helper()
	lg, c, err := LoggerFromEnv(getenv, stdout, stderr)
	if err != nil {
		t.Fatalf("LoggerFromEnv: %v", err)
	}
	lg.Debug("d-line")
	lg.Info("i-line")
	lg.Warn("w-line", "pe", 3)
	lg.Error("e-line")
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestLoggerLevels(t *testing.T) {
	cases := []struct {
		level string
		want  []string // lines present, in order; the rest must be absent
	}{
		{"", []string{"w-line", "e-line"}},
		{"DEBUG", []string{"d-line", "i-line", "w-line", "e-line"}},
		{"debug", []string{"d-line", "i-line", "w-line", "e-line"}},
		{"Info", []string{"i-line", "w-line", "e-line"}},
		{"WARN", []string{"w-line", "e-line"}},
		{"warning", []string{"w-line", "e-line"}},
		{" error ", []string{"e-line"}},
	}
	all := []string{"d-line", "i-line", "w-line", "e-line"}
	for _, c := range cases {
		t.Run(c.level, func(t *testing.T) {
			var out, errw bytes.Buffer
			logAll(t, env(EnvLogLevel, c.level), &out, &errw)
			if out.Len() != 0 {
				t.Fatalf("stdout got %q", out.String())
			}
			got := errw.String()
			for _, m := range all {
				in := strings.Contains(got, "msg="+m)
				if in != contains(c.want, m) {
					t.Fatalf("level %q: %q present=%v in %q", c.level, m, in, got)
				}
			}
			if strings.Count(got, "\n") != len(c.want) {
				t.Fatalf("want %d lines, got %q", len(c.want), got)
			}
			if contains(c.want, "w-line") && !strings.Contains(got, "level=WARN msg=w-line pe=3") {
				t.Fatalf("not text-handler output: %q", got)
			}
		})
	}
}

// TestDebugVariable: OpenSHMEM's SHMEM_DEBUG (any value) logs at DEBUG,
// and an explicit SHMEM_LOG_LEVEL wins over it.
func TestDebugVariable(t *testing.T) {
	for _, c := range []struct {
		getenv func(string) string
		debug  bool
	}{
		{env(EnvDebug, "1"), true},
		{env(EnvDebug, "yes"), true},
		{env(EnvDebug, "1", EnvLogLevel, "ERROR"), false},
		{env(EnvDebug, ""), false},
	} {
		var out, errw bytes.Buffer
		logAll(t, c.getenv, &out, &errw)
		if got := strings.Contains(errw.String(), "msg=d-line"); got != c.debug {
			t.Errorf("SHMEM_DEBUG=%q SHMEM_LOG_LEVEL=%q: debug line present=%v, want %v", c.getenv(EnvDebug), c.getenv(EnvLogLevel), got, c.debug)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestLoggerToStdout(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", "yes", "on"} {
		var out, errw bytes.Buffer
		logAll(t, env(EnvLogToStdout, v), &out, &errw)
		if errw.Len() != 0 || !strings.Contains(out.String(), "msg=e-line") {
			t.Fatalf("%s=%s: stdout %q stderr %q", EnvLogToStdout, v, out.String(), errw.String())
		}
	}
	for _, v := range []string{"0", "false", "no", "OFF", ""} {
		var out, errw bytes.Buffer
		logAll(t, env(EnvLogToStdout, v), &out, &errw)
		if out.Len() != 0 || !strings.Contains(errw.String(), "msg=e-line") {
			t.Fatalf("%s=%s: stdout %q stderr %q", EnvLogToStdout, v, out.String(), errw.String())
		}
	}
}

func TestLoggerPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "job1") // created by LoggerFromEnv
	var out, errw bytes.Buffer
	logAll(t, env(EnvLogPath, dir, EnvLogLevel, "info"), &out, &errw)
	if out.Len() != 0 || errw.Len() != 0 {
		t.Fatalf("console not silent: stdout %q stderr %q", out.String(), errw.String())
	}
	name := filepath.Join(dir, LogFileName(os.Getpid()))
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "msg=i-line") || strings.Contains(string(b), "msg=d-line") {
		t.Fatalf("log file holds %q", b)
	}
	fi, err := os.Stat(name)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("log file mode %v, %v; want 0600", fi.Mode(), err)
	}
	di, err := os.Stat(dir)
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("log dir mode %v, %v; want 0700", di.Mode(), err)
	}

	// A second logger appends rather than truncating, and with
	// SHMEM_LOG_TO_STDOUT the console gets the same lines.
	logAll(t, env(EnvLogPath, dir, EnvLogToStdout, "1"), &out, &errw)
	b, err = os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), "msg=e-line") != 2 {
		t.Fatalf("log file not appended: %q", b)
	}
	if !strings.Contains(out.String(), "msg=w-line") || errw.Len() != 0 {
		t.Fatalf("tee: stdout %q stderr %q", out.String(), errw.String())
	}
}

func TestLoggerErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plainfile")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	planted := t.TempDir()
	if err := os.Symlink(file, filepath.Join(planted, LogFileName(os.Getpid()))); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		getenv   func(string) string
		sentinel error
		want     string
	}{
		{"bad level", env(EnvLogLevel, "verbose"), errs.ErrInvalidArgument, EnvLogLevel + `="verbose"`},
		{"numeric level", env(EnvLogLevel, "3"), errs.ErrInvalidArgument, EnvLogLevel},
		{"bad bool", env(EnvLogToStdout, "maybe"), errs.ErrInvalidArgument, EnvLogToStdout + `="maybe"`},
		{"path is a file", env(EnvLogPath, file), errs.ErrBootstrap, EnvLogPath},
		{"path under a file", env(EnvLogPath, filepath.Join(file, "sub")), errs.ErrBootstrap, EnvLogPath},
		// A symlink planted at the log's predictable name, in a directory
		// others can write: before, the log was appended to its target.
		{"log name is a symlink", env(EnvLogPath, planted), errs.ErrBootstrap, "symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lg, cl, err := LoggerFromEnv(c.getenv, &bytes.Buffer{}, &bytes.Buffer{})
			if !errors.Is(err, c.sentinel) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %v mentioning %q", err, c.sentinel, c.want)
			}
			if lg != nil || cl != nil {
				t.Fatal("logger or closer returned with the error")
			}
		})
	}
}
