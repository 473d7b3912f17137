//go:build !race

package launchtest

const raceEnabled = false
