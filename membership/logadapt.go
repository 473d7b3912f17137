package membership

import (
	"bytes"
	"context"
	"log"
	"log/slog"
)

// slogWriter turns memberlist's "[LEVEL] memberlist: text" lines into slog
// records at the matching level.
type slogWriter struct {
	l    *slog.Logger
	name string
}

func (w slogWriter) Write(p []byte) (int, error) {
	line := bytes.TrimSpace(p)
	level := slog.LevelInfo
	for _, lv := range []struct {
		tag   string
		level slog.Level
	}{{"[DEBUG]", slog.LevelDebug}, {"[INFO]", slog.LevelInfo}, {"[WARN]", slog.LevelWarn}, {"[ERR]", slog.LevelError}} {
		if bytes.HasPrefix(line, []byte(lv.tag)) {
			level = lv.level
			line = bytes.TrimSpace(line[len(lv.tag):])
			break
		}
	}
	w.l.Log(context.Background(), level, string(line), "node", w.name)
	return len(p), nil
}

// newStdLogger is the *log.Logger memberlist writes to.
func newStdLogger(l *slog.Logger, name string) *log.Logger {
	return log.New(slogWriter{l: l, name: name}, "", 0)
}
