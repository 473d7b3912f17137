//go:build !race

package sim_test

import "time"

const raceEnabled = false

// goroutineSeeds and goroutineRounds size TestTwoGoroutinesBlockedAtOnce,
// and goroutineHang bounds one of its runs: a passing run takes
// milliseconds.
const (
	goroutineSeeds  = 30
	goroutineRounds = 16
	goroutineHang   = 30 * time.Second
)
