package admin

import (
	"fmt"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// The table page's charts: a table's lag, throughput and freshness over the
// last hour, each an inline SVG with a time axis (minutes before the
// report) and a value axis in its unit, drawn on the server from the
// node's samples (status.History, one every status.HistoryInterval).

const (
	axisW, axisH       = 360, 130
	axisLeft, axisRigh = 56, 8
	axisTop, axisBot   = 8, 22
)

// tick is one axis label at its position in the SVG.
type tick struct {
	Pos   string
	Label string
}

// axisChart is what the template draws.
type axisChart struct {
	Title, Unit  string
	W, H         int
	X0, Y0       int // the plot's left and bottom edges
	X1, Y1       int // its right and top edges
	Points       string
	LastX, LastY string
	XTicks       []tick
	YTicks       []tick
	Samples      int
	Latest       string // the newest value with its unit
}

// point is one value at one time.
type point struct {
	At time.Time
	V  float64
}

// tableCharts are the table page's three charts from its samples, each
// ending at the report's time.
func tableCharts(samples []status.Sample, now time.Time) []axisChart {
	var fresh, lag, rate []point
	for i, s := range samples {
		fresh = append(fresh, point{s.At, s.FreshnessSec})
		if s.Lag >= 0 {
			lag = append(lag, point{s.At, float64(s.Lag)})
		}
		if i > 0 {
			prev := samples[i-1]
			if dt := s.At.Sub(prev.At).Seconds(); dt > 0 {
				// A rewind with replace lowers the rows: no negative rate.
				rate = append(rate, point{s.At, max(0, float64(s.Rows-prev.Rows)/dt)})
			}
		}
	}
	return []axisChart{
		drawAxis("Lag", "records", lag, now, func(v float64) string { return fmt.Sprintf("%.0f", v) }),
		drawAxis("Throughput", "rows/s", rate, now, func(v float64) string { return trimZeros(fmt.Sprintf("%.1f", v)) }),
		drawAxis("Freshness", "s", fresh, now, func(v float64) string { return humanDur(v) }),
	}
}

func trimZeros(s string) string { return strings.TrimSuffix(s, ".0") }

// drawAxis plots the points of the hour before now, 0 at the bottom and
// the largest value (rounded up to a round number) at the top.
func drawAxis(title, unit string, pts []point, now time.Time, label func(float64) string) axisChart {
	c := axisChart{Title: title, Unit: unit, W: axisW, H: axisH, X0: axisLeft, Y0: axisH - axisBot, X1: axisW - axisRigh, Y1: axisTop}
	from := now.Add(-chartSpan)
	var in []point
	top := 0.0
	for _, p := range pts {
		if !p.At.Before(from) && !p.At.After(now) {
			in = append(in, p)
			top = max(top, p.V)
		}
	}
	top = roundUp(top)
	plotW, plotH := float64(c.X1-c.X0), float64(c.Y0-c.Y1)
	for _, m := range []int{60, 45, 30, 15, 0} {
		x := float64(c.X0) + plotW*float64(60-m)/60
		lbl := fmt.Sprintf("-%dm", m)
		if m == 0 {
			lbl = "now"
		}
		c.XTicks = append(c.XTicks, tick{Pos: fmt.Sprintf("%.1f", x), Label: lbl})
	}
	for _, f := range []float64{0, 0.5, 1} {
		y := float64(c.Y0) - plotH*f
		c.YTicks = append(c.YTicks, tick{Pos: fmt.Sprintf("%.1f", y), Label: label(top * f)})
	}
	c.Samples = len(in)
	if len(in) == 0 {
		return c
	}
	var b strings.Builder
	for i, p := range in {
		x := float64(c.X0) + plotW*float64(p.At.Sub(from))/float64(chartSpan)
		y := float64(c.Y0) - plotH*max(p.V, 0)/top
		if i > 0 {
			b.WriteByte(' ')
		}
		c.LastX, c.LastY = fmt.Sprintf("%.1f", x), fmt.Sprintf("%.1f", y)
		fmt.Fprintf(&b, "%s,%s", c.LastX, c.LastY)
	}
	c.Points = b.String()
	c.Latest = label(in[len(in)-1].V)
	return c
}

// roundUp is the smallest of 1, 2 or 5 times a power of ten at or above v
// (1 for 0), so the axis reads in round numbers.
func roundUp(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := 1.0
	for p*10 < v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if p*m >= v {
			return p * m
		}
	}
	return p * 10
}
