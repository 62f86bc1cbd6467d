// Package operatortest reads the operator's dashboard as a browser drew it, for the tests that
// load it in real Chromium: the page's script builds its charts from /status.json, so a chart
// with bars shows the script ran, read the figures and drew them.
package operatortest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Bar is one drawn bar (or one segment of a stacked bar).
type Bar struct {
	Class  string  // "bar", or "seg ok", "seg asked", "seg refused", "seg failed"
	Label  string  // the day or the route
	Value  string  // the figure drawn, as the JSON has it
	Height float64 // of a vertical bar
	Width  float64 // of a horizontal bar
}

// Page is what the dashboard showed once its script ran.
type Page struct {
	// Loaded is the generated_at of the snapshot the page drew (empty: it drew none).
	Loaded string
	// Charts are the bars of each chart by the chart's element id.
	Charts map[string][]Bar
	// Tiles are the headline figures, value and label.
	Tiles [][2]string
	// Text is the page's visible text, for the cards' figures.
	Text string
}

// Read parses the serialised DOM of the dashboard.
func Read(html string) (Page, error) {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		return Page{}, err
	}
	p := Page{Charts: map[string][]Bar{}, Text: doc.Find("main").Text()}
	p.Loaded, _ = doc.Find("body").Attr("data-loaded")
	var bad error
	doc.Find("div.chart").Each(func(_ int, chart *goquery.Selection) {
		id, _ := chart.Attr("id")
		bars := []Bar{}
		chart.Find("rect").Each(func(_ int, r *goquery.Selection) {
			b := Bar{Class: r.AttrOr("class", ""), Label: r.AttrOr("data-label", ""), Value: r.AttrOr("data-value", "")}
			var err error
			if b.Height, err = strconv.ParseFloat(r.AttrOr("height", "0"), 64); err != nil && bad == nil {
				bad = fmt.Errorf("chart %s: bar %s height: %w", id, b.Label, err)
			}
			if b.Width, err = strconv.ParseFloat(r.AttrOr("width", "0"), 64); err != nil && bad == nil {
				bad = fmt.Errorf("chart %s: bar %s width: %w", id, b.Label, err)
			}
			bars = append(bars, b)
		})
		p.Charts[id] = bars
	})
	doc.Find("#tiles .tile").Each(func(_ int, t *goquery.Selection) {
		p.Tiles = append(p.Tiles, [2]string{t.Find("b").Text(), t.Find("span").Text()})
	})
	return p, bad
}
