package shmem_test

import (
	"flag"
	"strings"
)

// benchArgs returns the -test.bench pattern, so big sizes run only when
// the pattern names them.
func benchArgs() []string {
	if f := flag.Lookup("test.bench"); f != nil {
		return []string{f.Value.String()}
	}
	return nil
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
