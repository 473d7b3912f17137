package core

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

// The log gate passes what the handler passes at level 1, keeps only
// errors at level 0, and a derived logger follows a later change.
func TestPcontrolGate(t *testing.T) {
	var buf bytes.Buffer
	var level atomic.Int32
	level.Store(1)
	log := slog.New(gate{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}), &level}).With("pe", 3)
	log.Info("one")
	log.Debug("hidden by the handler")
	level.Store(0)
	log.Warn("muted")
	log.Error("kept")
	level.Store(2)
	log.WithGroup("g").Info("back")
	out := buf.String()
	for _, want := range []string{"msg=one", "msg=kept", "msg=back", "pe=3"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"hidden", "muted"} {
		if strings.Contains(out, not) {
			t.Errorf("log has %q:\n%s", not, out)
		}
	}
}
