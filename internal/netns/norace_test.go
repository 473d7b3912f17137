//go:build !race

package netns_test

const raceEnabled = false
