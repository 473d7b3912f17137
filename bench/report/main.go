package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	in := fs.String("in", "", "comma-separated CSV files to read (required)")
	out := fs.String("out", "BENCHMARKS.md", "Markdown file to write")
	png := fs.String("png", "", "PNG file for the plots (none if empty)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("-in is required")
	}
	var all []sample
	for _, path := range strings.Split(*in, ",") {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		rows, err := readCSV(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, rows...)
	}
	stats := medians(all)
	var md bytes.Buffer
	if err := writeMarkdown(&md, stats); err != nil {
		return err
	}
	if err := os.WriteFile(*out, md.Bytes(), 0o644); err != nil {
		return err
	}
	if *png != "" {
		return writePlots(*png, stats)
	}
	return nil
}
