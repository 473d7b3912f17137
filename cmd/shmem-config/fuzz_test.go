package main

import (
	"strings"
	"testing"
)

// FuzzFindUCX parses arbitrary ldconfig output: no panic, and a path
// reported from it is text of the input.
func FuzzFindUCX(f *testing.F) {
	f.Add("\tlibucp.so.0 (libc6,x86-64) => /usr/lib/libucp.so.0\n")
	f.Add("libucp.so")
	f.Add("libucp.so =>")
	f.Fuzz(func(t *testing.T, out string) {
		r := findUCX(out, func(string) bool { return false })
		if r.Present && (r.Via != "ldconfig" || !strings.Contains(out, r.Path)) {
			t.Fatalf("%q gave %+v", out, r)
		}
	})
}
