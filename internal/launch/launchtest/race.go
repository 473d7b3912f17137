//go:build race

package launchtest

// RaceEnabled reports whether this test binary has the race detector: the
// programs a process test builds (PE programs, launchers, scripts that
// build their own) are then built with -race too.
const RaceEnabled = true
