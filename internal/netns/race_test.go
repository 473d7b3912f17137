//go:build race

package netns_test

const raceEnabled = true
