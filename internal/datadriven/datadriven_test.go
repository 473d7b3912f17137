package datadriven

import (
	"fmt"
	"strings"
	"testing"
)

func TestRunFile(t *testing.T) {
	RunFile(t, "testdata/echo", func(t *testing.T, c *Case) string {
		var b strings.Builder
		b.WriteString(strings.ToUpper(c.Input) + "\n")
		for _, k := range []string{"a", "b"} {
			v, ok := c.Arg(k)
			if v != "" {
				fmt.Fprintf(&b, "%s=%s present=%v\n", k, v, ok)
			} else {
				fmt.Fprintf(&b, "%s present=%v\n", k, ok)
			}
		}
		return b.String()
	})
}
