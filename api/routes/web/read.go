package web

import (
	"context"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/browserfarm"
)

// Page is a page as the language-model routes read it: its main content and visible text.
type Page = family.Page

// ReadPage loads url for a reader that will reason over it (understand, extract-structured,
// guard, agent task). What is not the page itself is refused before anyone reasons over it,
// with the errors of the web routes (nothing charged): an anti-bot or captcha challenge, the
// target's HTTP error, a document that is not a page, and a script wall (a page whose only
// content asks to enable JavaScript).
func (r *Routes) ReadPage(ctx context.Context, url string, free bool) (*Page, error) {
	p, err := r.load(ctx, browserfarm.Task{URL: url, Free: free, Layout: true, ServerHTML: true}, acceptText)
	if err != nil {
		return nil, err
	}
	if wall := scriptWall(p.res.Text); wall != "" {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target",
			Message: "the page shows only a script wall (" + wall + "); it is refused before any reasoning and nothing was charged"}
	}
	c, err := contentOf(p)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Markdown) == "" && strings.TrimSpace(p.res.Text) == "" {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target", Message: "the page has no readable content; nothing was charged"}
	}
	return &Page{URL: url, FinalURL: p.res.Landed(), Title: c.Title, Markdown: c.Markdown, Text: p.res.Text}, nil
}

// ReadyToRead reports whether pages can be read.
func (r *Routes) ReadyToRead() error { return r.farm.Ready() }

var scriptWallPhrases = []string{"enable javascript", "javascript is required", "javascript is disabled",
	"please turn on javascript", "activez javascript", "javascript est désactivé", "you need to enable javascript"}

// scriptWall names the phrase of a page whose visible text is little more than a request to
// enable JavaScript, "" otherwise.
func scriptWall(text string) string {
	t := strings.ToLower(strings.TrimSpace(text))
	if len([]rune(t)) > 600 {
		return ""
	}
	for _, p := range scriptWallPhrases {
		if strings.Contains(t, p) {
			return p
		}
	}
	return ""
}
