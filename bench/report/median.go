package main

import "sort"

// stat is the merged value of all repetitions of one key.
type stat struct {
	latencyUS     float64 // median over runs
	bandwidthMBps float64 // median over runs
	runs          int
}

// medians groups samples by key and takes the median of latency and of
// bandwidth separately: interleaved runs disturb the two independently, and
// the median keeps one noisy run from moving the result.
func medians(samples []sample) map[key]stat {
	lat := map[key][]float64{}
	bw := map[key][]float64{}
	for _, s := range samples {
		lat[s.key] = append(lat[s.key], s.latencyUS)
		bw[s.key] = append(bw[s.key], s.bandwidthMBps)
	}
	out := make(map[key]stat, len(lat))
	for k, l := range lat {
		out[k] = stat{latencyUS: median(l), bandwidthMBps: median(bw[k]), runs: len(l)}
	}
	return out
}

// median returns the middle value, or the mean of the two middle values for
// an even count; 0 for none. It sorts xs in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}
