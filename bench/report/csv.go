// Command report turns benchmark CSV files from goshmem and OSHMEM runs into
// BENCHMARKS.md (median latency and bandwidth per message size, with
// goshmem/oshmem ratios) and a PNG of latency and bandwidth against size.
//
//	bench/report.sh -in a.csv,b.csv -out BENCHMARKS.md -png bench/plot.png
package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// header is the exact first line every input CSV must carry.
const header = "impl,transport,bench,size_bytes,iterations,latency_us,bandwidth_MBps"

// key names one measured point; repetitions of the same key are merged.
type key struct {
	impl, transport, bench string
	size                   int64
}

// sample is one CSV row.
type sample struct {
	key
	iterations    int64
	latencyUS     float64
	bandwidthMBps float64
}

// readCSV parses rows in the header's format. It rejects a different header,
// short rows and negative or non-finite numbers, naming the line.
func readCSV(r io.Reader) ([]sample, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 7
	cr.TrimLeadingSpace = true
	first, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	if strings.Join(first, ",") != header {
		return nil, fmt.Errorf("header is %q, want %q", strings.Join(first, ","), header)
	}
	var out []sample
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		s, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, s)
	}
}

func parseRow(rec []string) (sample, error) {
	s := sample{key: key{impl: rec[0], transport: rec[1], bench: rec[2]}}
	if s.impl == "" || s.transport == "" || s.bench == "" {
		return s, errors.New("empty impl, transport or bench")
	}
	var err error
	if s.size, err = strconv.ParseInt(rec[3], 10, 64); err != nil || s.size < 0 {
		return s, fmt.Errorf("bad size_bytes %q", rec[3])
	}
	if s.iterations, err = strconv.ParseInt(rec[4], 10, 64); err != nil || s.iterations < 0 {
		return s, fmt.Errorf("bad iterations %q", rec[4])
	}
	if s.latencyUS, err = parseNonNeg(rec[5]); err != nil {
		return s, fmt.Errorf("bad latency_us: %w", err)
	}
	if s.bandwidthMBps, err = parseNonNeg(rec[6]); err != nil {
		return s, fmt.Errorf("bad bandwidth_MBps: %w", err)
	}
	return s, nil
}

func parseNonNeg(f string) (float64, error) {
	v, err := strconv.ParseFloat(f, 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not a finite non-negative number", f)
	}
	return v, nil
}
