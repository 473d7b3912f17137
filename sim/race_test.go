//go:build race

package sim_test

// raceEnabled: the race detector multiplies a huge world's memory by
// several times, so TestScale does not run under it.
const raceEnabled = true
