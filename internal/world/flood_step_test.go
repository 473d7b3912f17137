package world

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/datadriven"
)

// TestFloodScenarios drives one PE's flood step through the scenarios of
// testdata/flood. "world me=M" starts a PE M whose input lines give the
// reach graph, one line per PE "a: b c" (a connects to b and c; a PE
// always reaches itself); "record failed=F origin=O" records a failure
// and lists the notices ("coordinator" is rank 0's).
func TestFloodScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/flood/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var f *floodState
			datadriven.RunFile(t, file, func(t *testing.T, c *datadriven.Case) string {
				switch c.Cmd {
				case "world":
					lines := strings.Split(c.Input, "\n")
					reach := make([][]bool, len(lines))
					for a, l := range lines {
						reach[a] = make([]bool, len(lines))
						reach[a][a] = true
						_, rest, _ := strings.Cut(l, ":")
						for _, w := range strings.Fields(rest) {
							b, err := strconv.Atoi(w)
							if err != nil || b < 0 || b >= len(lines) {
								t.Fatalf("%s: bad reach line %q", c.Pos, l)
							}
							reach[a][b] = true
						}
					}
					f = newFloodState(reach, scenarioInt(t, c, "me"))
					return "ok"
				case "record":
					notices := f.step(scenarioInt(t, c, "failed"), scenarioInt(t, c, "origin"))
					if len(notices) == 0 {
						return "nothing"
					}
					var b strings.Builder
					for _, n := range notices {
						to := strconv.Itoa(n.to)
						if n.to == coordinatorTarget {
							to = "coordinator"
						}
						fmt.Fprintf(&b, "tell %s: PE %d failed (origin %d)\n", to, n.failed, n.origin)
					}
					return b.String()
				}
				t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
				return ""
			})
		})
	}
}

func scenarioInt(t *testing.T, c *datadriven.Case, key string) int {
	v, ok := c.Arg(key)
	if !ok {
		t.Fatalf("%s: %s= missing", c.Pos, key)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q", c.Pos, key, v)
	}
	return n
}
