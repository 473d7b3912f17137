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
	intro := fs.String("intro", "", "Markdown file placed after the title, followed by the targets table (none if empty)")
	notes := fs.String("notes", "", "Markdown file appended after the targets table (none if empty)")
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
	introText, err := readOptional(*intro)
	if err != nil {
		return err
	}
	notesText, err := readOptional(*notes)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if err := writeMarkdown(&md, stats, introText, notesText); err != nil {
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

// readOptional returns the file's text, or "" for an empty path.
func readOptional(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	return string(b), err
}
