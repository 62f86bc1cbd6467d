package us

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/annual"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/llm"
	"github.com/peage/appliance/api/upstream/secedgar"
)

// Brief is the /v1/us/brief answer.
type Brief struct {
	CIK          string             `json:"cik"`
	Name         string             `json:"name"`
	Ticker       string             `json:"ticker,omitempty"`
	Window       Window             `json:"window"`
	Brief        BriefText          `json:"brief"`
	Metrics      map[string][]Point `json:"metrics"`
	Sources      []BriefSource      `json:"sources"`
	Verification BriefVerification  `json:"verification"`
	Usage        BriefUsage         `json:"usage"`
	Method       string             `json:"method"`
}

// Window is the filing dates the brief covers.
type Window struct {
	Since string `json:"since"`
	Until string `json:"until"`
}

// BriefText is what the model wrote, every key point citing numbered sources.
type BriefText struct {
	Summary   string     `json:"summary"`
	KeyPoints []KeyPoint `json:"key_points"`
}

// KeyPoint is one claim and the sources it cites.
type KeyPoint struct {
	Text    string `json:"text"`
	Sources []int  `json:"sources"`
}

// Point is one annual figure with the source it comes from.
type Point struct {
	FY     int     `json:"fy"`
	End    string  `json:"end"`
	Value  float64 `json:"value"`
	Source int     `json:"source"`
}

// BriefSource is one SEC filing the brief may cite.
type BriefSource struct {
	N     int    `json:"n"`
	Form  string `json:"form"`
	Filed string `json:"filed"`
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// BriefVerification is the citation check: a key point is cited when it names at least one
// source of the list and every figure it states is a figure of the fact sheet.
type BriefVerification struct {
	CitationRate float64  `json:"citation_rate"`
	Passe        bool     `json:"passe"`
	Checked      int      `json:"checked"`
	Failures     []string `json:"failures,omitempty"`
}

// BriefUsage is the model's token count.
type BriefUsage struct {
	Model        string `json:"model"`
	PromptTokens int    `json:"prompt_tokens"`
	OutputTokens int    `json:"completion_tokens"`
}

const briefMethod = "Sources are the company's 10-K, 10-Q and 8-K filings in the window (default: the 12 months before its latest filing) and the annual reports its XBRL figures come from. " +
	"The model writes from a numbered fact sheet of those filings and figures only; a key point passes when it cites listed sources and each number in it (3 or more significant digits) is on the fact sheet. " +
	"The brief is given only when every key point passes (citation_rate 1.0); otherwise nothing is answered or charged."

var briefForms = map[string]bool{"10-K": true, "10-K/A": true, "10-Q": true, "8-K": true}

var briefSchema = &llm.Schema{Name: "brief", Doc: map[string]any{
	"type": "object", "additionalProperties": false, "required": []any{"summary", "key_points"},
	"properties": map[string]any{
		"summary": map[string]any{"type": "string"},
		"key_points": map[string]any{"type": "array", "minItems": 1.0, "maxItems": 8.0, "items": map[string]any{
			"type": "object", "additionalProperties": false, "required": []any{"text", "sources"},
			"properties": map[string]any{"text": map[string]any{"type": "string"},
				"sources": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}}}},
	}}}

func (r *Routes) modelReady() error {
	if r.model == nil {
		return fmt.Errorf("%s: %w", llm.Name, upstream.ErrNotConfigured)
	}
	return r.model.Ready()
}

func (r *Routes) brief(ctx context.Context, req *catalog.Request) (any, error) {
	c, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	subs, err := r.sec.Submissions(ctx, c.cik)
	if err != nil {
		return nil, notFound(err, c.cik, "submissions")
	}
	filings := recentFilings(c.cik, subs, func(form string) bool { return briefForms[form] })
	if len(filings) == 0 {
		return nil, apierr.NotFound("SEC EDGAR lists no 10-K, 10-Q or 8-K for CIK %s", secedgar.CIK10(c.cik))
	}
	win := Window{Since: req.Args.Str("since"), Until: req.Args.Str("until")}
	if win.Until == "" {
		win.Until = filings[0].Filed
	}
	if win.Since == "" {
		u, _ := time.Parse(time.DateOnly, win.Until)
		win.Since = u.AddDate(-1, 0, 0).Format(time.DateOnly)
	}
	out := Brief{CIK: secedgar.CIK10(c.cik), Name: subs.Name, Ticker: c.ticker, Window: win, Metrics: map[string][]Point{}, Method: briefMethod}
	byAccn := map[string]int{}
	add := func(f Filing) int {
		if n, ok := byAccn[f.Accession]; ok {
			return n
		}
		n := len(out.Sources) + 1
		out.Sources = append(out.Sources, BriefSource{N: n, Form: f.Form, Filed: f.Filed, URL: f.DocumentURL, Title: f.Description})
		byAccn[f.Accession] = n
		return n
	}
	for _, f := range filings {
		if f.Filed >= win.Since && f.Filed <= win.Until && len(out.Sources) < 10 {
			add(f)
		}
	}
	if len(out.Sources) == 0 {
		return nil, apierr.NotFound("no 10-K, 10-Q or 8-K of CIK %s was filed between %s and %s", secedgar.CIK10(c.cik), win.Since, win.Until)
	}
	all := recentFilings(c.cik, subs, func(string) bool { return true })
	if cf, err := r.sec.CompanyFacts(ctx, c.cik); err == nil {
		if ends := annual.YearEnds(cf, 3); len(ends) > 0 {
			for _, m := range []annual.Metric{annual.Revenue, annual.NetIncome, annual.OperatingIncome} {
				for _, p := range annual.Annual(cf, m, ends).Points {
					i := slices.IndexFunc(all, func(f Filing) bool { return f.Accession == p.Accn })
					if i < 0 {
						continue // a figure whose filing is not listed cannot be cited
					}
					out.Metrics[m.Name] = append(out.Metrics[m.Name], Point{FY: p.FY, End: p.End, Value: p.Value, Source: add(all[i])})
				}
			}
		}
	}
	sheet := factSheet(out)
	res, err := r.model.Complete(ctx, llm.Request{Class: llm.Strong, MaxTokens: 1500, Schema: briefSchema, Messages: []llm.Message{
		{Role: "system", Content: "Write a brief of a US company's recent SEC filings from the fact sheet only: a summary and up to 8 key points. Each key point cites the numbers [n] of the sources it rests on. State figures exactly as the fact sheet gives them. Answer with JSON only."},
		{Role: "user", Content: sheet},
	}})
	if err != nil {
		return nil, briefModelError(err)
	}
	out.Usage = BriefUsage{Model: res.Model, PromptTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}
	o := res.JSON.(map[string]any)
	out.Brief.Summary, _ = o["summary"].(string)
	figures := numbersOf(sheet)
	ok := 0
	for i, it := range o["key_points"].([]any) {
		kp := it.(map[string]any)
		point := KeyPoint{Text: kp["text"].(string)}
		for _, s := range kp["sources"].([]any) {
			point.Sources = append(point.Sources, int(s.(float64)))
		}
		out.Brief.KeyPoints = append(out.Brief.KeyPoints, point)
		if why := checkPoint(point, len(out.Sources), figures); why != "" {
			out.Verification.Failures = append(out.Verification.Failures, fmt.Sprintf("key point %d: %s", i+1, why))
			continue
		}
		ok++
	}
	out.Verification.Checked = len(out.Brief.KeyPoints)
	out.Verification.CitationRate = float64(ok) / float64(len(out.Brief.KeyPoints))
	out.Verification.Passe = ok == len(out.Brief.KeyPoints)
	if !out.Verification.Passe {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: llm.Name,
			Message: fmt.Sprintf("verification failed (citation_rate %.2f: %s); no brief is given and nothing was charged", out.Verification.CitationRate, strings.Join(out.Verification.Failures, "; "))}
	}
	return out, nil
}

// factSheet is everything the model may state, numbered like the sources.
func factSheet(b Brief) string {
	var s strings.Builder
	fmt.Fprintf(&s, "Company: %s (CIK %s, ticker %s). Filings from %s to %s.\nSources:\n", b.Name, b.CIK, b.Ticker, b.Window.Since, b.Window.Until)
	for _, src := range b.Sources {
		fmt.Fprintf(&s, "[%d] %s filed %s %s\n", src.N, src.Form, src.Filed, src.Title)
	}
	s.WriteString("Annual figures (USD):\n")
	for _, name := range []string{"revenue", "net_income", "operating_income"} {
		for _, p := range b.Metrics[name] {
			fmt.Fprintf(&s, "%s FY%d (year ended %s): %s USD = %s billion [%d]\n", name, p.FY, p.End,
				strconv.FormatFloat(p.Value, 'f', -1, 64), strconv.FormatFloat(p.Value/1e9, 'f', 2, 64), p.Source)
		}
	}
	return s.String()
}

var numberRe = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// numbersOf is the set of figures a text states, commas removed.
func numbersOf(s string) map[string]bool {
	out := map[string]bool{}
	for _, n := range numberRe.FindAllString(s, -1) {
		out[strings.ReplaceAll(n, ",", "")] = true
	}
	return out
}

// significant counts the significant digits of a figure.
func significant(n string) int {
	d := strings.TrimLeft(strings.ReplaceAll(n, ".", ""), "0")
	return len(d)
}

// checkPoint is "" when a key point cites listed sources and states only fact-sheet figures.
func checkPoint(p KeyPoint, sources int, figures map[string]bool) string {
	if len(p.Sources) == 0 {
		return "cites no source"
	}
	for _, n := range p.Sources {
		if n < 1 || n > sources {
			return fmt.Sprintf("cites source [%d], which is not listed", n)
		}
	}
	for n := range numbersOf(p.Text) {
		if significant(n) >= 3 && !figures[n] && !isYear(n) {
			return fmt.Sprintf("states %s, which is not on the fact sheet", n)
		}
	}
	return ""
}

func isYear(n string) bool {
	y, err := strconv.Atoi(n)
	return err == nil && y >= 1990 && y <= 2100
}

func briefModelError(err error) error {
	var re *llm.RefusalError
	var ie *llm.InvalidError
	switch {
	case errors.As(err, &re):
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: llm.Name, Cause: err, Message: "the model declined to write the brief; nothing was charged"}
	case errors.As(err, &ie), errors.Is(err, llm.ErrTruncated):
		return &apierr.Error{Code: apierr.CodeUpstream, Upstream: llm.Name, Cause: err, Message: "the model's brief was incomplete or not in the required shape; nothing was charged"}
	}
	return err
}
