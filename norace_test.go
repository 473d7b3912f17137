//go:build !race

package shmem_test

const raceEnabled = false
