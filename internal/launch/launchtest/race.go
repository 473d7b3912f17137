//go:build race

package launchtest

const raceEnabled = true
