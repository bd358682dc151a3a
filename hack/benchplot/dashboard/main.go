// Command dashboard draws a Grafana dashboard of config/grafana as a PNG
// from what a real Prometheus answered its panel queries:
// TestMetricsWithARealPrometheus writes the answers (KUBENATS_DASHBOARD_OUT)
// after its workload, a server down and back, and a store filled past
// 80 %; `make dashboard-images` draws them into docs/images. Panels
// without data are left out, the others keep the dashboard's order, two to
// a row. Nothing is drawn by hand: every line is a series Prometheus gave.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// answers is the JSON the e2e test writes (prometheus_dashboard_test.go).
type answers struct {
	Title  string `json:"title"`
	Panels []struct {
		Title  string `json:"title"`
		Unit   string `json:"unit"`
		Series []struct {
			Legend string       `json:"legend"`
			Points [][2]float64 `json:"points"`
		} `json:"series"`
	} `json:"panels"`
}

func main() {
	in := flag.String("in", "", "the dashboard's answers (JSON)")
	out := flag.String("out", "", "the PNG to write")
	maxPanels := flag.Int("panels", 10, "panels drawn at most")
	flag.Parse()
	if err := run(*in, *out, *maxPanels); err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}

// palette tells a panel's series apart.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

func run(in, out string, maxPanels int) error {
	if in == "" || out == "" {
		return errors.New("-in and -out are required")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var a answers
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	// One time axis for every panel, as a dashboard has.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, panel := range a.Panels {
		for _, s := range panel.Series {
			for _, pt := range s.Points {
				xmin, xmax = math.Min(xmin, pt[0]), math.Max(xmax, pt[0])
			}
		}
	}
	var plots []*plot.Plot
	for _, panel := range a.Panels {
		if len(plots) == maxPanels {
			break
		}
		p, ok, err := panelPlot(panel.Title, panel.Unit, panel.Series)
		if err != nil {
			return err
		}
		if ok {
			p.X.Min, p.X.Max = xmin, xmax
			plots = append(plots, p)
		}
	}
	if len(plots) == 0 {
		return fmt.Errorf("%s: no panel has data", in)
	}
	const cols = 2
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, p := range plots {
		grid[i/cols][i%cols] = p
	}
	width, rowHeight := 26*vg.Centimeter, 6*vg.Centimeter
	title := 1.2 * vg.Centimeter
	img := vgimg.New(width, rowHeight*vg.Length(rows)+title)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	heading := plot.New()
	top := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: 0, Y: dc.Max.Y - title}, Max: dc.Max}}
	style := heading.Title.TextStyle
	style.Font.Size = 14
	style.XAlign = draw.XCenter
	top.FillText(style, vg.Point{X: width / 2, Y: dc.Max.Y - title/2 - 5}, a.Title+" (from the e2e run's Prometheus)")
	body := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: dc.Min, Max: vg.Point{X: dc.Max.X, Y: dc.Max.Y - title}}}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, body)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// panelPlot draws one panel; ok is false when it has no point.
func panelPlot(title, unit string, series []struct {
	Legend string       `json:"legend"`
	Points [][2]float64 `json:"points"`
}) (*plot.Plot, bool, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds into the test"
	scale, label := unitScale(unit)
	p.Y.Label.Text = label
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	any := false
	for i, s := range series {
		if len(s.Points) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(s.Points))
		for k, pt := range s.Points {
			pts[k].X, pts[k].Y = pt[0], pt[1]*scale
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, false, err
		}
		line.Color = palette[i%len(palette)]
		line.Width = vg.Points(1.5)
		p.Add(line)
		if s.Legend != "" && i < 6 {
			p.Legend.Add(shorten(s.Legend), line)
		}
		any = true
	}
	return p, any, nil
}

// unitScale turns a Grafana unit into a factor and an axis label.
func unitScale(unit string) (float64, string) {
	switch unit {
	case "percentunit":
		return 100, "%"
	case "percent":
		return 1, "%"
	case "bytes":
		return 1.0 / (1 << 20), "MiB"
	case "Bps":
		return 1.0 / 1024, "KiB/s"
	case "ops":
		return 1, "per second"
	case "s":
		return 1, "seconds"
	}
	return 1, ""
}

func shorten(s string) string {
	if len(s) > 28 {
		return s[:25] + "..."
	}
	return strings.TrimSpace(s)
}
