package browserfarm

import (
	"context"
	"encoding/json"
	"time"

	"github.com/go-rod/rod"
)

// Scroll asks for a list that grows as it is scrolled (an endless results feed) to be
// scrolled before the page is read: the container is scrolled to its end, the page is let
// settle, and again, until Want items are there, the end-of-list marker shows, the list
// stops growing, or the job's wait budget is spent. The page is read as it then is.
type Scroll struct {
	Container string // CSS selector of the scrolled element
	Items     string // CSS selector counting the list's items
	Want      int    // enough items: scrolling stops once this many are present
	End       string // CSS selector of the end-of-list marker; "" when the list has none
}

// ScrollResult says how the scrolling ended.
type ScrollResult struct {
	Items  int `json:"items"`
	Rounds int `json:"rounds"` // scrolls made
	// Stop is why it stopped: "want" (enough items), "end" (the end marker showed),
	// "stalled" (no new item after two scrolls), "no_container" (the page has no such list)
	// or "budget" (the wait budget was spent first).
	Stop string `json:"stop"`
}

// growWait is how long one scroll may take to bring new items: a feed asks its server for
// the next page when it is scrolled, which takes a round trip and a render.
const growWait = 3 * time.Second

// jsScrollStep counts the items and, when more are wanted and the list has not ended,
// scrolls the container (and its last item) into its end.
const jsScrollStep = `(container, items, end, want) => {
	const c = document.querySelector(container);
	const all = document.querySelectorAll(items);
	const ended = !!(end && document.querySelector(end));
	if (!c || all.length >= want || ended) return {found: !!c, n: all.length, ended};
	// The last item into view first (for a list scrolled by an ancestor), then the
	// container to its very end.
	if (all.length) all[all.length - 1].scrollIntoView({block: 'end'});
	c.scrollTop = c.scrollHeight;
	return {found: true, n: all.length, ended, scrolled: true};
}`

// jsScrollGrow waits until there are more than n items or the end marker shows, at most ms.
const jsScrollGrow = `(items, end, n, ms) => new Promise(r => {
	const grew = () => document.querySelectorAll(items).length > n || !!(end && document.querySelector(end));
	if (grew()) { r(true); return; }
	const obs = new MutationObserver(() => { if (grew()) { obs.disconnect(); r(true); } });
	obs.observe(document, {subtree: true, childList: true});
	setTimeout(() => { obs.disconnect(); r(grew()); }, ms);
})`

type scrollStep struct {
	Found    bool `json:"found"`
	N        int  `json:"n"`
	Ended    bool `json:"ended"`
	Scrolled bool `json:"scrolled"`
}

// scroll runs the task's Scroll until waitEnd. Its failures are not the job's: the page is
// read as far as it got, and ScrollResult says where it stopped.
func (f *Farm) scroll(ctx context.Context, page *rod.Page, reqs *pageRequests, waitEnd time.Time, s *Scroll) *ScrollResult {
	sctx, cancel := context.WithDeadline(ctx, waitEnd)
	defer cancel()
	out := &ScrollResult{Stop: "budget"}
	stalls := 0
	for sctx.Err() == nil {
		val, err := evalJS(page.Context(sctx), jsScrollStep, s.Container, s.Items, s.End, s.Want)
		if err != nil {
			return out
		}
		var st scrollStep
		if json.Unmarshal([]byte(val.JSON("", "")), &st) != nil {
			return out
		}
		out.Items = st.N
		switch {
		case !st.Found:
			out.Stop = "no_container"
			return out
		case st.N >= s.Want:
			out.Stop = "want"
			return out
		case st.Ended:
			out.Stop = "end"
			return out
		}
		out.Rounds++
		wait := min(growWait, time.Until(waitEnd))
		grew, err := evalJS(page.Context(sctx), jsScrollGrow, s.Items, s.End, st.N, wait.Milliseconds())
		if err != nil {
			return out
		}
		// The new items' batch may still be arriving: let the page settle before counting.
		_ = f.settle(sctx, page, reqs)
		if grew.Bool() {
			stalls = 0
			continue
		}
		if stalls++; stalls == 2 {
			out.Stop = "stalled"
			return out
		}
	}
	return out
}
