package main

import (
	"strings"
	"testing"
)

func TestCompileCommand(t *testing.T) {
	t.Setenv("CC", "gcc -m64")
	cases := []struct {
		args []string
		link bool
	}{
		{[]string{"-O2", "prog.c", "-o", "prog"}, true},
		{[]string{"-c", "prog.c"}, false},
		{[]string{"-E", "prog.c"}, false},
		{[]string{"--version"}, false},
		{[]string{"a.o", "b.o", "-lm", "-o", "prog"}, true},
	}
	for _, c := range cases {
		cmd := strings.Join(compileCommand("/cache", c.args, false), " ")
		if !strings.HasPrefix(cmd, "gcc -m64 -I/cache/include ") {
			t.Errorf("%v: %s", c.args, cmd)
		}
		if got := strings.Contains(cmd, "-lgoshmem -Wl,-rpath,/cache"); got != c.link {
			t.Errorf("%v: links %v, want %v: %s", c.args, got, c.link, cmd)
		}
	}
	if cmd := strings.Join(compileCommand("/cache", []string{"p.c"}, true), " "); !strings.Contains(cmd, "/cache/libgoshmem.a") {
		t.Errorf("static: %s", cmd)
	}
}
