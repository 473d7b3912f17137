package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestMetricsFlag: -metrics prints the Collector's series after the
// benches; osu.c's put runs 1000 warm-up and 10000 timed puts per size,
// so sizes 1, 2, 4 and 8 make 44000 puts of 165000 bytes, exactly, in the
// simulator and between processes on shared memory.
func TestMetricsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		path string
	}{
		{[]string{"-pes", "2"}, "sim"},
		{[]string{"-np", "2", "-bind", "none"}, "shm"},
	} {
		t.Run(c.path, func(t *testing.T) {
			t.Setenv("SHMEM_UID_SESSION_ID", "")
			var out, errb bytes.Buffer
			if err := run(append(c.args, "-b", "put", "-m", "8", "-metrics"), &out, &errb); err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, errb.String())
			}
			for name, want := range map[string]string{"shmem_ops_total": "44000", "shmem_bytes_total": "165000"} {
				if got := series(errb.String(), name+`{op="put",path="`+c.path+`",pe="0",`); got != want {
					t.Errorf("%s of PE 0's puts: %q, want %s; stderr:\n%s", name, got, want, errb.String())
				}
			}
		})
	}
}

// series returns the value of the line of text that starts with prefix
// (a metric name and its first labels), or "".
func series(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if i := strings.LastIndexByte(l, ' '); strings.HasPrefix(l, prefix) && i > 0 {
			return l[i+1:]
		}
	}
	return ""
}
