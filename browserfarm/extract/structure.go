package extract

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Table is one HTML table as rows keyed by header.
type Table struct {
	Index    int                 `json:"index"`
	Caption  string              `json:"caption,omitempty"`
	Headers  []string            `json:"headers"`
	RowCount int                 `json:"row_count"`
	Rows     []map[string]string `json:"rows"`
}

// maxSpan bounds colspan/rowspan so a hostile table cannot make us allocate without end.
const maxSpan = 100

// Tables lays every table out on a grid (expanding colspan and rowspan, so a merged cell
// gives its value to every column and row it covers), takes the header rows (thead, or the
// leading rows made only of th) and names each column by its header texts top-down joined
// with " / ", e.g. "Température / Min". Tables nested in tables are read on their own.
func Tables(doc *goquery.Document) []Table {
	out := []Table{}
	doc.Find("table").Each(func(i int, t *goquery.Selection) {
		rows := t.Find("tr").FilterFunction(func(_ int, tr *goquery.Selection) bool {
			return tr.ParentsFiltered("table").First().IsSelection(t)
		})
		grid, isHead := layout(rows)
		if len(grid) == 0 {
			return
		}
		nh := 0
		for nh < len(grid) && isHead[nh] {
			nh++
		}
		width := 0
		for _, r := range grid {
			width = max(width, len(r))
		}
		headers := make([]string, width)
		used := map[string]int{}
		for c := range width {
			var parts []string
			for r := range nh {
				if c < len(grid[r]) && grid[r][c] != "" && (len(parts) == 0 || parts[len(parts)-1] != grid[r][c]) {
					parts = append(parts, grid[r][c])
				}
			}
			h := strings.Join(parts, " / ")
			if h == "" {
				h = "column_" + strconv.Itoa(c+1)
			}
			used[h]++
			if used[h] > 1 {
				h = fmt.Sprintf("%s (%d)", h, used[h])
			}
			headers[c] = h
		}
		tb := Table{Index: len(out), Caption: Normalise(t.Find("caption").First().Text()), Headers: headers, Rows: []map[string]string{}}
		for _, r := range grid[nh:] {
			row := map[string]string{}
			empty := true
			for c, h := range headers {
				v := ""
				if c < len(r) {
					v = r[c]
				}
				row[h] = v
				empty = empty && v == ""
			}
			if !empty {
				tb.Rows = append(tb.Rows, row)
			}
		}
		tb.RowCount = len(tb.Rows)
		out = append(out, tb)
	})
	return out
}

func layout(rows *goquery.Selection) (grid [][]string, isHead []bool) {
	type pending struct {
		text string
		left int
	}
	carry := map[int]*pending{} // column → rowspan still to fill
	headDone := false
	rows.Each(func(ri int, tr *goquery.Selection) {
		var row []string
		col := 0
		fill := func() {
			for {
				p, ok := carry[col]
				if !ok {
					return
				}
				row = append(row, p.text)
				if p.left--; p.left == 0 {
					delete(carry, col)
				}
				col++
			}
		}
		allTH := true
		cells := tr.ChildrenFiltered("td, th")
		cells.Each(func(_ int, c *goquery.Selection) {
			fill()
			if goquery.NodeName(c) != "th" {
				allTH = false
			}
			text := Normalise(c.Text())
			cs := span(c.AttrOr("colspan", "1"))
			rs := span(c.AttrOr("rowspan", "1"))
			for range cs {
				row = append(row, text)
				if rs > 1 {
					carry[col] = &pending{text: text, left: rs - 1}
				}
				col++
			}
		})
		fill()
		if cells.Length() == 0 {
			return
		}
		inHead := tr.ParentsFiltered("thead").Length() > 0
		head := !headDone && (inHead || allTH)
		if !head {
			headDone = true
		}
		grid = append(grid, row)
		isHead = append(isHead, head)
	})
	return grid, isHead
}

func span(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, maxSpan)
}

// Heading is one h1-h6 in document order.
type Heading struct {
	Level  int    `json:"level"`
	Text   string `json:"text"`
	Anchor string `json:"anchor"` // "#id" when the heading can be linked to, else ""
}

// Headings lists every heading with its level and anchor.
func Headings(doc *goquery.Document) []Heading {
	out := []Heading{}
	doc.Find("h1, h2, h3, h4, h5, h6").Each(func(_ int, h *goquery.Selection) {
		text := Normalise(h.Text())
		if text == "" {
			return
		}
		level := int(goquery.NodeName(h)[1] - '0')
		anchor := h.AttrOr("id", "")
		if anchor == "" {
			anchor = h.Find("[id]").First().AttrOr("id", h.Find("a[name]").First().AttrOr("name", ""))
		}
		if anchor == "" {
			if p := h.Parent(); goquery.NodeName(p) == "section" {
				anchor = p.AttrOr("id", "")
			}
		}
		if anchor != "" {
			anchor = "#" + anchor
		}
		out = append(out, Heading{Level: level, Text: text, Anchor: anchor})
	})
	return out
}

// Form is one form; nothing is ever submitted.
type Form struct {
	Index  int     `json:"index"`
	ID     string  `json:"id,omitempty"`
	Name   string  `json:"name,omitempty"`
	Action string  `json:"action"`
	Method string  `json:"method"`
	Fields []Field `json:"fields"`
}

// Field is one control of a form.
type Field struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Label    string   `json:"label"`
	Required bool     `json:"required"`
	Options  []Option `json:"options,omitempty"`
}

// Option is one choice of a select.
type Option struct {
	Value    string `json:"value"`
	Text     string `json:"text"`
	Selected bool   `json:"selected,omitempty"`
}

// Forms lists every form with its resolved action, method and labelled fields.
func Forms(doc *goquery.Document, pageURL string) []Form {
	base := baseURL(doc, pageURL)
	out := []Form{}
	doc.Find("form").Each(func(i int, f *goquery.Selection) {
		action := pageURL
		if a, ok := f.Attr("action"); ok && strings.TrimSpace(a) != "" {
			action = Resolve(base, a)
		}
		method := strings.ToUpper(strings.TrimSpace(f.AttrOr("method", "GET")))
		if method != "POST" && method != "DIALOG" {
			method = "GET"
		}
		form := Form{Index: i, ID: f.AttrOr("id", ""), Name: f.AttrOr("name", ""), Action: action, Method: method, Fields: []Field{}}
		f.Find("input, select, textarea").Each(func(_ int, c *goquery.Selection) {
			tag := goquery.NodeName(c)
			typ := tag
			if tag == "input" {
				typ = strings.ToLower(c.AttrOr("type", "text"))
				switch typ {
				case "submit", "button", "reset", "image":
					return
				}
			}
			fld := Field{Name: c.AttrOr("name", c.AttrOr("id", "")), Type: typ, Label: label(doc, c)}
			_, fld.Required = c.Attr("required")
			if v := c.AttrOr("aria-required", ""); v == "true" {
				fld.Required = true
			}
			if tag == "select" {
				c.Find("option").Each(func(_ int, o *goquery.Selection) {
					_, sel := o.Attr("selected")
					text := Normalise(o.Text())
					fld.Options = append(fld.Options, Option{Value: o.AttrOr("value", text), Text: text, Selected: sel})
				})
			}
			form.Fields = append(form.Fields, fld)
		})
		out = append(out, form)
	})
	return out
}

// label finds what a person reads next to the control: label[for], a wrapping label (minus
// the control's own text), aria-labelledby, aria-label, then the placeholder.
func label(doc *goquery.Document, c *goquery.Selection) string {
	if id := c.AttrOr("id", ""); id != "" {
		if l := doc.Find(`label[for="` + cssEscape(id) + `"]`).First(); l.Length() > 0 {
			return Normalise(l.Text())
		}
	}
	if l := c.ParentsFiltered("label").First(); l.Length() > 0 {
		clone := l.Clone()
		clone.Find("input, select, textarea").Remove()
		if t := Normalise(clone.Text()); t != "" {
			return t
		}
	}
	if ids := c.AttrOr("aria-labelledby", ""); ids != "" {
		var parts []string
		for _, id := range strings.Fields(ids) {
			parts = append(parts, Normalise(doc.Find("#"+cssEscape(id)).Text()))
		}
		if t := strings.Join(parts, " "); strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t)
		}
	}
	if t := c.AttrOr("aria-label", ""); t != "" {
		return Normalise(t)
	}
	return Normalise(c.AttrOr("placeholder", c.AttrOr("title", "")))
}

func cssEscape(s string) string {
	return strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(s)
}

// Zone is a navigation area of the page.
type Zone struct {
	Zone   string `json:"zone"` // header, nav or footer
	Label  string `json:"label,omitempty"`
	Within string `json:"within,omitempty"` // for a nav: the header or footer it sits in
	Links  []Link `json:"links"`
}

// Navigation returns the header, nav and footer zones with every link inside each. A nav
// inside the header or footer is also reported as a nav zone that names its parent (within).
func Navigation(doc *goquery.Document, pageURL string) []Zone {
	base := baseURL(doc, pageURL)
	out := []Zone{}
	links := func(s *goquery.Selection) []Link {
		ls := []Link{}
		seen := map[string]bool{}
		s.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
			href := Resolve(base, a.AttrOr("href", ""))
			if href == "" || seen[href] {
				return
			}
			seen[href] = true
			ls = append(ls, Link{Href: href, Text: Normalise(a.Text())})
		})
		return ls
	}
	doc.Find("header, [role=banner], nav, [role=navigation], footer, [role=contentinfo]").Each(func(_ int, s *goquery.Selection) {
		zone := goquery.NodeName(s)
		switch s.AttrOr("role", "") {
		case "banner":
			zone = "header"
		case "navigation":
			zone = "nav"
		case "contentinfo":
			zone = "footer"
		}
		if zone != "header" && zone != "nav" && zone != "footer" {
			return
		}
		// A header inside an article is the article's, not the site's.
		if zone != "nav" && s.ParentsFiltered("article, main, section").Length() > 0 {
			return
		}
		z := Zone{Zone: zone, Label: Normalise(s.AttrOr("aria-label", "")), Links: links(s)}
		if zone == "nav" {
			if s.ParentsFiltered("header, [role=banner]").Length() > 0 {
				z.Within = "header"
			} else if s.ParentsFiltered("footer, [role=contentinfo]").Length() > 0 {
				z.Within = "footer"
			}
		}
		if len(z.Links) > 0 {
			out = append(out, z)
		}
	})
	return out
}

// SocialImage is the page's preview image (og:image, then twitter:image).
func SocialImage(doc *goquery.Document, pageURL string) string {
	base := baseURL(doc, pageURL)
	for _, sel := range []string{`meta[property="og:image"]`, `meta[property="og:image:url"]`, `meta[name="twitter:image"]`, `meta[property="twitter:image"]`} {
		if v := strings.TrimSpace(doc.Find(sel).First().AttrOr("content", "")); v != "" {
			return Resolve(base, v)
		}
	}
	return ""
}
