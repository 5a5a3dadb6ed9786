package admin

import (
	"fmt"
	"strings"
	"time"

	"github.com/floe-io/floe/internal/status"
)

// The freshness chart: an inline SVG polyline of a table's freshness over
// the last hour (the node's samples, status.History), drawn on the server.

const (
	chartW, chartH = 120, 28
	chartSpan      = time.Hour
	chartPad       = 2
)

// chart is what the template draws: Points in the SVG's coordinates (x
// grows with time, the top is the largest freshness, MaxSec).
type chart struct {
	Points string
	// LastX, LastY mark the newest sample (a line of one point shows
	// nothing).
	LastX, LastY string
	MaxSec       float64
	Samples      int
	W, H         int
}

// freshnessChart plots the samples of the hour before now; older ones are
// left out.
func freshnessChart(samples []status.Sample, now time.Time) chart {
	c := chart{W: chartW, H: chartH}
	from := now.Add(-chartSpan)
	var in []status.Sample
	for _, s := range samples {
		if !s.At.Before(from) && !s.At.After(now) {
			in = append(in, s)
			c.MaxSec = max(c.MaxSec, s.FreshnessSec)
		}
	}
	c.Samples = len(in)
	if len(in) == 0 {
		return c
	}
	top := max(c.MaxSec, 1)
	var b strings.Builder
	for i, s := range in {
		// A margin of chartPad keeps the newest sample's dot inside.
		x := chartPad + float64(chartW-2*chartPad)*float64(s.At.Sub(from))/float64(chartSpan)
		y := float64(chartH-chartPad) - float64(chartH-2*chartPad)*max(s.FreshnessSec, 0)/top
		if i > 0 {
			b.WriteByte(' ')
		}
		c.LastX, c.LastY = fmt.Sprintf("%.1f", x), fmt.Sprintf("%.1f", y)
		fmt.Fprintf(&b, "%s,%s", c.LastX, c.LastY)
	}
	c.Points = b.String()
	return c
}
