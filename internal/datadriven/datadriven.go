// Package datadriven runs table tests written as text files, in the style of
// etcd-raft's and CockroachDB's testdata scenarios: a pure state machine is
// driven by commands read from a file, and what it answers is compared with
// the expected output written below each command. Run the tests with
// -rewrite to regenerate the expected outputs after a deliberate change, then
// read the diff.
//
// A file is a sequence of cases separated by blank lines:
//
//	# a comment line
//	command arg1 arg2=value
//	optional input lines
//	----
//	expected output lines
//
// Output that itself contains blank lines is not supported: the first blank
// line ends a case.
package datadriven

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// rewrite is a test flag of every package that imports datadriven: it is
// registered once per test binary, which is its own process.
var rewrite = flag.Bool("rewrite", false, "rewrite datadriven expected outputs")

// Case is one command of a scenario file.
type Case struct {
	Pos   string   // file:line, for messages
	Cmd   string   // the first word of the command line
	Args  []string // the other words, as written
	Input string   // the lines between the command and "----"
}

// Arg returns the value of key=value among the case's arguments, and
// whether it was there. A bare word "key" has the value "".
func (c *Case) Arg(key string) (string, bool) {
	for _, a := range c.Args {
		k, v, _ := strings.Cut(a, "=")
		if k == key {
			return v, true
		}
	}
	return "", false
}

// RunFile runs every case of the file at path through f and compares what
// f returns with the expected output; with -rewrite it writes f's outputs
// into the file instead.
func RunFile(t *testing.T, path string, f func(t *testing.T, c *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			i++
			continue
		}
		words := strings.Fields(l)
		c := &Case{Pos: fmt.Sprintf("%s:%d", path, i+1), Cmd: words[0], Args: words[1:]}
		out.WriteString(l + "\n")
		i++
		var in []string
		for i < len(lines) && lines[i] != "----" {
			in = append(in, lines[i])
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s: no ---- after the command", c.Pos)
		}
		c.Input = strings.Join(in, "\n")
		for _, s := range in {
			out.WriteString(s + "\n")
		}
		out.WriteString("----\n")
		i++
		var want []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			want = append(want, lines[i])
			i++
		}
		got := strings.TrimRight(f(t, c), "\n")
		if got != "" {
			out.WriteString(got + "\n")
		}
		if !*rewrite && got != strings.Join(want, "\n") {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", c.Pos, l, got, strings.Join(want, "\n"))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
