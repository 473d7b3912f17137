package main

import (
	"os"
	"regexp"
	"testing"
)

// TestNonFetchingAtomicsPost checks the generated C routines: every
// non-fetching atomic (add, inc, and, or, xor, with or without a context)
// falls back to a posted operation, as the Go API's AtomicAdd does, and
// never to a fetching one, which over the network waits a round trip for
// a value nobody reads.
func TestNonFetchingAtomicsPost(t *testing.T) {
	src, err := os.ReadFile("typed_gen.c")
	if err != nil {
		t.Fatal(err)
	}
	def := regexp.MustCompile(`(?m)^void (shmem_\w*?(?:atomic_(?:add|inc|and|or|xor)|_add|_inc))\((.*)\) \{\n((?:  .*\n)+)\}`)
	code := regexp.MustCompile(`GS_AMO_\w+`)
	posted := map[string]bool{"GS_AMO_ADD": true, "GS_AMO_AND": true, "GS_AMO_OR": true, "GS_AMO_XOR": true}
	n := 0
	for _, m := range def.FindAllStringSubmatch(string(src), -1) {
		c := code.FindString(m[3])
		if c == "" {
			continue // a non-blocking form that calls another routine
		}
		n++
		if !posted[c] {
			t.Errorf("%s falls back to %s, a fetching operation", m[1], c)
		}
	}
	if n < 90 {
		t.Fatalf("found %d non-fetching atomic routines; the pattern no longer matches typed_gen.c", n)
	}
}
