package membership

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/admit"
)

// undecryptable is what memberlist says of a packet or stream sealed with
// another key: a process started with another job secret, or a stranger.
var undecryptable = []byte("no installed keys could decrypt")

// closedConn is what memberlist's sends and reads say once Close has shut
// its sockets under them: a gossip round, probe or push-pull under way
// ("[ERR] memberlist: Failed to send gossip to ...: use of closed network
// connection"). During Close it is the shutdown, logged at debug level.
var closedConn = []byte("use of closed network connection")

// Rate limits of memberlist's warnings and errors. A stranger decides how
// often memberlist complains (every packet it cannot decrypt is a line), so
// each kind of line passes at most once per limitEvery, with the count held
// back; at most maxLimits kinds get a limiter of their own, the rest share
// one, so strangers cannot grow the map either.
const (
	limitEvery = time.Second
	maxLimits  = 64
	limitKey   = 48 // bytes of a line that name its kind
)

// slogWriter turns memberlist's "[LEVEL] memberlist: text" lines into slog
// records at the matching level, rate-limiting warnings and errors, and
// counts the messages that could not be decrypted for Form's error. Once
// closing is set (World.Close), a line about a closed connection is the
// shutdown's, logged at debug level.
type slogWriter struct {
	l             *slog.Logger
	name          string
	undecryptable *atomic.Int64
	closing       *atomic.Bool
	now           func() time.Time // time.Now; tests set a clock

	mu     sync.Mutex
	limits map[string]*admit.Limiter
}

func newSlogWriter(l *slog.Logger, name string, undecryptable *atomic.Int64, closing *atomic.Bool) *slogWriter {
	return &slogWriter{l: l, name: name, undecryptable: undecryptable, closing: closing, now: time.Now, limits: map[string]*admit.Limiter{}}
}

func (w *slogWriter) Write(p []byte) (int, error) {
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
	if bytes.Contains(line, undecryptable) {
		w.undecryptable.Add(1)
	}
	if level > slog.LevelDebug && w.closing.Load() && bytes.Contains(line, closedConn) {
		level = slog.LevelDebug
	}
	args := []any{"node", w.name}
	if level >= slog.LevelWarn {
		held, ok := w.limiter(line).Allow(w.now())
		if !ok {
			return len(p), nil
		}
		if held > 0 {
			args = append(args, "suppressed_since_last", held)
		}
	}
	w.l.Log(context.Background(), level, string(line), args...)
	return len(p), nil
}

// limiter returns the limiter of line's kind: its text before the peer's
// address (" from="), at most limitKey bytes.
func (w *slogWriter) limiter(line []byte) *admit.Limiter {
	if i := bytes.Index(line, []byte(" from=")); i >= 0 {
		line = line[:i]
	}
	key := string(line[:min(len(line), limitKey)])
	w.mu.Lock()
	defer w.mu.Unlock()
	if l, ok := w.limits[key]; ok {
		return l
	}
	if len(w.limits) >= maxLimits {
		key = ""
		if l, ok := w.limits[key]; ok {
			return l
		}
	}
	l := &admit.Limiter{Every: limitEvery}
	w.limits[key] = l
	return l
}

// newStdLogger is the *log.Logger memberlist writes to.
func newStdLogger(w *slogWriter) *log.Logger { return log.New(w, "", 0) }
