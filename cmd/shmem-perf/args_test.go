package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestParseRefusesPECounts: the benches pair PE i with PE i+n/2, so an odd,
// negative or explicitly zero -np or -pes is refused before -np starts any
// process; -h is help, not a failure.
func TestParseRefusesPECounts(t *testing.T) {
	for _, args := range [][]string{{"-np", "3"}, {"-np", "0"}, {"-pes", "-2"}, {"-pes", "5"}} {
		if _, err := parse(args, io.Discard); err == nil || !strings.Contains(err.Error(), "even number of PEs") {
			t.Errorf("parse(%q): %v, want the even-number refusal", args, err)
		}
	}
	if _, err := parse([]string{"-np", "2"}, io.Discard); err != nil {
		t.Errorf("-np 2: %v", err)
	}
	if _, err := parse([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}
