package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// panel is one chart of the PNG: a bench and which value it draws.
type panel struct {
	bench, title, yLabel string
	value                func(stat) float64
}

func panels() [][]panel {
	lat := func(s stat) float64 { return s.latencyUS }
	bw := func(s stat) float64 { return s.bandwidthMBps }
	return [][]panel{
		{{"put", "put + quiet latency", "µs", lat}, {"get", "get latency", "µs", lat}},
		{{"put", "put bandwidth", "MB/s", bw}, {"get", "get bandwidth", "MB/s", bw}},
	}
}

// writePlots draws a 2×2 PNG: put and get latency, then put and get
// bandwidth, against message size on log-log axes, one line per
// impl/transport.
func writePlots(path string, stats map[key]stat) error {
	idx := index(stats)
	grid := panels()
	plots := make([][]*plot.Plot, len(grid))
	for r, row := range grid {
		for _, pn := range row {
			p, err := drawPanel(pn, idx[pn.bench])
			if err != nil {
				return err
			}
			plots[r] = append(plots[r], p)
		}
	}
	img := vgimg.New(24*vg.Centimeter, 20*vg.Centimeter)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]),
		PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(plots, tiles, dc)
	for r := range plots {
		for c := range plots[r] {
			plots[r][c].Draw(canvases[r][c])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// drawPanel plots the positive points of each line; log axes are set only
// when there is something to draw, because a log scale over no data panics.
func drawPanel(pn panel, lines map[line]series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.title
	p.X.Label.Text = "message size (bytes)"
	p.Y.Label.Text = pn.yLabel
	p.Legend.Top, p.Legend.Left = true, true
	var names []line
	for l := range lines {
		names = append(names, l)
	}
	slices.SortFunc(names, func(a, b line) int {
		return strings.Compare(a.impl+"/"+a.transport, b.impl+"/"+b.transport)
	})
	var args []any
	for _, l := range names {
		var pts plotter.XYs
		for _, size := range sizes(lines[l]) {
			if y := pn.value(lines[l][size]); size > 0 && y > 0 {
				pts = append(pts, plotter.XY{X: float64(size), Y: y})
			}
		}
		if len(pts) > 0 {
			args = append(args, l.impl+" "+l.transport, pts)
		}
	}
	if len(args) == 0 {
		p.Title.Text += " (no data)"
		return p, nil
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	// A single value makes plot widen the axis by ±1, which can cross zero.
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		if ax.Min == ax.Max {
			ax.Min, ax.Max = ax.Min/2, ax.Max*2
		}
	}
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	return p, nil
}
