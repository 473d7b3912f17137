package main

import (
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// drawPNG writes a PNG with one log-log panel per model: predicted time (µs)
// against PEs, one line per algorithm, so that a log term shows as a
// straight shallow line and a linear term as a slope of one.
func drawPNG(path string, pts []point) error {
	var models []string
	byModel := map[string]map[string]plotter.XYs{}
	var order []string
	seen := map[string]bool{}
	for _, p := range pts {
		if byModel[p.model] == nil {
			byModel[p.model] = map[string]plotter.XYs{}
			models = append(models, p.model)
		}
		if !seen[p.alg] {
			seen[p.alg] = true
			order = append(order, p.alg)
		}
		byModel[p.model][p.alg] = append(byModel[p.model][p.alg], plotter.XY{X: float64(p.npes), Y: float64(p.t.Nanoseconds()) / 1e3})
	}
	row := make([]*plot.Plot, len(models))
	for i, m := range models {
		p := plot.New()
		p.Title.Text = "predicted, model " + m
		p.X.Label.Text = "PEs"
		p.Y.Label.Text = "µs per call"
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.TextStyle.Font.Size = vg.Points(7)
		for k, alg := range order {
			xys := byModel[m][alg]
			if len(xys) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			l.Color, s.Color = plotutil.Color(k), plotutil.Color(k)
			s.Shape = plotutil.Shape(k)
			p.Add(l, s)
			p.Legend.Add(alg, l, s)
		}
		row[i] = p
	}
	img := vgimg.New(30*vg.Centimeter, 13*vg.Centimeter)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Centimeter,
		PadTop: 3 * vg.Millimeter, PadBottom: 3 * vg.Millimeter, PadLeft: 3 * vg.Millimeter, PadRight: 3 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
