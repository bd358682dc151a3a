// Command benchplot draws the JetStream benchmark's timeline (the CSV that
// test/bench writes with KUBENATS_BENCH_TIMELINE): objects Ready over time
// for kubenats beside its floors, as a PNG. It is a module of its own so
// that the plotting library stays out of the operator's dependencies.
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func main() {
	in := flag.String("in", "", "the timeline CSV (series,seconds)")
	out := flag.String("out", "", "the PNG to write")
	title := flag.String("title", "JetStream resources Ready over time", "the plot's title")
	flag.Parse()
	if err := run(*in, *out, *title); err != nil {
		fmt.Fprintln(os.Stderr, "benchplot:", err)
		os.Exit(1)
	}
}

func run(in, out, title string) error {
	if in == "" || out == "" {
		return errors.New("-in and -out are required")
	}
	series, order, err := readTimeline(in)
	if err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the first create call"
	p.Y.Label.Text = "objects"
	p.Legend.Top, p.Legend.Left = false, false
	colors := []color.RGBA{{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}}
	for i, name := range order {
		times := series[name]
		pts := make(plotter.XYs, 0, len(times)+1)
		pts = append(pts, plotter.XY{})
		for n, t := range times {
			pts = append(pts, plotter.XY{X: t, Y: float64(n + 1)})
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color = colors[i%len(colors)]
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("%s (%.1f s)", name, times[len(times)-1]), line)
	}
	return p.Save(8*vg.Inch, 4.5*vg.Inch, out)
}

// readTimeline reads series,seconds rows, each series' times ascending.
func readTimeline(path string) (map[string][]float64, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 2
	series := map[string][]float64{}
	var order []string
	for line := 0; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if line == 0 {
			continue // the header
		}
		t, err := strconv.ParseFloat(rec[1], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line %d: %w", path, line+1, err)
		}
		if _, ok := series[rec[0]]; !ok {
			order = append(order, rec[0])
		}
		series[rec[0]] = append(series[rec[0]], t)
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("%s has no rows", path)
	}
	return series, order, nil
}
