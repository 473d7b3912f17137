package bootstrap

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/goshmem/shmem/internal/errs"
)

// The logging variables LoggerFromEnv reads.
const (
	EnvLogLevel    = "SHMEM_LOG_LEVEL"
	EnvLogPath     = "SHMEM_LOG_PATH"
	EnvLogToStdout = "SHMEM_LOG_TO_STDOUT"
	// EnvDebug is OpenSHMEM's switch for debugging messages: any value
	// means SHMEM_LOG_LEVEL=DEBUG unless that is set.
	EnvDebug = "SHMEM_DEBUG"
)

// LogFileName is the file LoggerFromEnv creates inside SHMEM_LOG_PATH for
// the process with the given pid; one file per process so PEs sharing a
// directory never interleave lines.
func LogFileName(pid int) string { return "goshmem-" + strconv.Itoa(pid) + ".log" }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// LoggerFromEnv builds goshmem's logger (a slog text handler) from:
//
//   - SHMEM_LOG_LEVEL: DEBUG, INFO, WARN (or WARNING) or ERROR, any case;
//     default WARN, so a healthy job prints nothing, or DEBUG when
//     SHMEM_DEBUG (OpenSHMEM's variable) has any value.
//   - SHMEM_LOG_PATH: a directory (created 0700 if missing); the log goes to
//     LogFileName(os.Getpid()) inside it, created 0600 and appended to.
//   - SHMEM_LOG_TO_STDOUT: 1/true/yes/on writes to stdout instead of
//     stderr; 0/false/no/off or unset keeps stderr. With SHMEM_LOG_PATH set
//     the console is silent unless this is on, then both get every line.
//
// The Closer closes the log file (a no-op without one); call it after the
// last log line. Bad values are errors wrapping errs.ErrInvalidArgument that
// name the variable; a file that cannot be created wraps errs.ErrBootstrap.
func LoggerFromEnv(getenv func(string) string, stdout, stderr io.Writer) (*slog.Logger, io.Closer, error) {
	bad := func(sentinel error, format string, args ...any) (*slog.Logger, io.Closer, error) {
		return nil, nil, errs.New("LoggerFromEnv", errs.NoPE, errs.NoPE, sentinel, format, args...)
	}
	level := slog.LevelWarn
	if getenv(EnvDebug) != "" {
		level = slog.LevelDebug
	}
	if v := strings.TrimSpace(getenv(EnvLogLevel)); v != "" {
		switch strings.ToUpper(v) {
		case "DEBUG":
			level = slog.LevelDebug
		case "INFO":
			level = slog.LevelInfo
		case "WARN", "WARNING":
			level = slog.LevelWarn
		case "ERROR":
			level = slog.LevelError
		default:
			return bad(errs.ErrInvalidArgument, "%s=%q: want DEBUG, INFO, WARN or ERROR", EnvLogLevel, v)
		}
	}
	toStdout, err := EnvBool(EnvLogToStdout, getenv(EnvLogToStdout))
	if err != nil {
		return nil, nil, err
	}
	console := stderr
	if toStdout {
		console = stdout
	}

	var w io.Writer = console
	var closer io.Closer = nopCloser{}
	if dir := strings.TrimSpace(getenv(EnvLogPath)); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return bad(errs.ErrBootstrap, "%s=%q: %v", EnvLogPath, dir, err)
		}
		name := filepath.Join(dir, LogFileName(os.Getpid()))
		// The directory may be one others can write (/tmp) and the name
		// is predictable: a symlink planted there must not make this
		// process append to a file the link names, nor a file planted
		// by another user receive its log.
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return bad(errs.ErrBootstrap, "%s: %v", EnvLogPath, err)
		}
		if err := ownRegular(f); err != nil {
			f.Close()
			return bad(errs.ErrBootstrap, "%s: %s %v", EnvLogPath, name, err)
		}
		w, closer = f, f
		if toStdout {
			w = io.MultiWriter(f, console)
		}
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(h), closer, nil
}

// EnvBool reads the on/off variable name whose value is v, as every
// goshmem switch is read: 1/true/yes/on or 0/false/no/off, any case and
// surrounding spaces; empty is off. Anything else is an error wrapping
// errs.ErrInvalidArgument that names the variable.
func EnvBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	}
	return false, errs.New("EnvBool", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%s=%q: want 1/true/yes/on or 0/false/no/off", name, v)
}

// ownRegular checks that f is a regular file of this process's user.
func ownRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("is not a regular file (%v)", fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("is owned by uid %d, not by this process's %d", st.Uid, os.Geteuid())
	}
	return nil
}
