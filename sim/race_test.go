//go:build race

package sim_test

import "time"

// raceEnabled: the race detector multiplies a huge world's memory by
// several times, so TestScale does not run under it.
const raceEnabled = true

// goroutineSeeds and goroutineRounds size TestTwoGoroutinesBlockedAtOnce
// (fewer seeds under the race detector, which slows every step), and
// goroutineHang bounds one of its runs: a passing run takes milliseconds.
const (
	goroutineSeeds  = 10
	goroutineRounds = 16
	goroutineHang   = 60 * time.Second
)
