//go:build race

package world_test

// raceEnabled says the tests run with the race detector: the PE programs
// they start are built with it too.
const raceEnabled = true
