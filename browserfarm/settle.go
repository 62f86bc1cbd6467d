package browserfarm

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/ysmood/gson"
)

// A page is read once it has settled: the window load event came, none of the page's own
// requests that can still change its document is open, and the DOM stayed still through a
// quiet window in which no such request started or ended. Waiting on the requests
// themselves, not on a longer quiet time, is what makes content that a script fetches after
// load (a timer, then a fetch, then an insertion) appear however slow the machine is: the
// quiet window only has to cover the page's own work between two events the farm sees.

// settleTypes are the requests of the main frame whose answer can still change the document
// or its layout. Images, media, fonts, beacons and event streams are left out: they do not
// change the text, and streams never end.
var settleTypes = map[proto.NetworkResourceType]bool{
	proto.NetworkResourceTypeDocument:   true, // a navigation by script: the next document is read
	proto.NetworkResourceTypeXHR:        true,
	proto.NetworkResourceTypeFetch:      true,
	proto.NetworkResourceTypeScript:     true,
	proto.NetworkResourceTypeStylesheet: true,
}

// pageRequests follows the main frame's open requests of the settleTypes from CDP events.
// Requests of child frames are not counted: their documents are not part of the page read.
type pageRequests struct {
	frame proto.PageFrameID
	mu    sync.Mutex
	open  map[proto.NetworkRequestID]bool
	// moves counts requests started and ended, so a waiter can tell that one came and went
	// entirely within its quiet window.
	moves   uint64
	changed chan struct{} // closed and replaced at every move
}

func newPageRequests(frame proto.PageFrameID) *pageRequests {
	return &pageRequests{frame: frame, open: map[proto.NetworkRequestID]bool{}, changed: make(chan struct{})}
}

func (p *pageRequests) onRequest(e *proto.NetworkRequestWillBeSent) {
	if e.FrameID != p.frame || !settleTypes[e.Type] {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.open[e.RequestID] { // a redirect keeps its request id
		p.open[e.RequestID] = true
		p.moveLocked()
	}
}

func (p *pageRequests) onFinished(e *proto.NetworkLoadingFinished) { p.end(e.RequestID) }

func (p *pageRequests) onFailed(e *proto.NetworkLoadingFailed) { p.end(e.RequestID) }

func (p *pageRequests) end(id proto.NetworkRequestID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open[id] {
		delete(p.open, id)
		p.moveLocked()
	}
}

func (p *pageRequests) moveLocked() {
	p.moves++
	close(p.changed)
	p.changed = make(chan struct{})
}

// state reports how many requests are open and how many moves there were so far.
func (p *pageRequests) state() (open int, moves uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.open), p.moves
}

// awaitIdle waits until no request is open, or ctx ends.
func (p *pageRequests) awaitIdle(ctx context.Context) {
	for {
		p.mu.Lock()
		n, ch := len(p.open), p.changed
		p.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

const jsDOMReady = `() => new Promise(r => {
	if (document.readyState !== 'loading') r(true);
	else document.addEventListener('DOMContentLoaded', () => r(true), {once: true});
})`

// jsInert says whether a document has nothing that runs: no script element that executes
// (a data block such as JSON-LD does not), no event handler attribute, no frame or plugin, no
// refresh. Such a document cannot change once loaded, so it is read at once: the quiet window
// is the cost of scripts, and a static page does not pay it.
const jsInert = `() => {
	const js = /^(|module|(text|application)\/(x-)?(java|ecma)script|text\/(jscript|livescript)|text\/javascript1\.[0-5])$/i;
	for (const s of document.getElementsByTagName('script')) {
		if (js.test((s.getAttribute('type') || '').trim())) return false;
	}
	if (document.querySelector('iframe, frame, object, embed, meta[http-equiv="refresh" i]')) return false;
	for (const el of document.getElementsByTagName('*')) {
		for (const a of el.attributes) if (a.name.startsWith('on')) return false;
	}
	return true;
}`

// jsLoaded waits for window load and says whether the document is inert (jsInert).
const jsLoaded = `() => new Promise(r => {
	const inert = ` + jsInert + `;
	if (document.readyState === 'complete') r(inert());
	else window.addEventListener('load', () => r(inert()), {once: true});
})`

// jsSettle waits for window load (again: a script may have navigated since), then for the
// DOM to stay still for quiet ms (at most max ms), unless the document is inert.
const jsSettle = `(quiet, max) => new Promise(r => {
	const inert = ` + jsInert + `;
	const settle = () => {
		if (inert()) { r(true); return; }
		const start = Date.now();
		let t;
		const done = () => { obs.disconnect(); r(true); };
		const obs = new MutationObserver(() => {
			clearTimeout(t);
			t = setTimeout(done, Date.now() - start > max ? 0 : quiet);
		});
		obs.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
		t = setTimeout(done, quiet);
		setTimeout(done, max);
	};
	if (document.readyState === 'complete') settle();
	else window.addEventListener('load', settle, {once: true});
})`

// waitPage waits for the page to settle (best effort: at most LoadWait for the load event,
// then at most SettleMax), then makes sure the HTML document itself is complete (required).
// The common case is two round trips.
func (f *Farm) waitPage(ctx context.Context, page *rod.Page, reqs *pageRequests, waitEnd time.Time, res *Result) error {
	wctx, cancel := context.WithDeadline(ctx, waitEnd)
	defer cancel()
	err := f.settle(wctx, page, reqs)
	if errors.Is(context.Cause(ctx), errPageCrashed) {
		return f.browserErr(ctx, err, "wait")
	}
	res.LoadComplete = err == nil
	if res.LoadComplete {
		return nil
	}
	for range 3 {
		if _, err = evalJS(page.Context(wctx), jsDOMReady); err == nil || wctx.Err() != nil {
			break
		}
	}
	if err == nil {
		return nil
	}
	if errors.Is(context.Cause(ctx), errPageCrashed) || ctx.Err() != nil {
		return f.browserErr(ctx, err, "wait")
	}
	if wctx.Err() != nil {
		return &farmerr.Error{Kind: farmerr.Timeout, Party: farmerr.TargetParty, Cause: err,
			Message: "the page's HTML did not finish loading within the wait budget (stage: wait)"}
	}
	return f.browserErr(ctx, err, "wait")
}

// settle returns nil once the page has settled, or once its settling time is spent after
// the load event; an error when the load event did not come within LoadWait.
func (f *Farm) settle(wctx context.Context, page *rod.Page, reqs *pageRequests) error {
	lctx, cancel := context.WithTimeout(wctx, f.cfg.LoadWait)
	defer cancel()
	quiet := f.cfg.SettleQuiet.Milliseconds()
	var settleEnd time.Time // SettleMax after the load event, once it came
	failures := 0
	for {
		var err error
		if settleEnd.IsZero() {
			// Requests made before the load event are part of it: only those after count.
			var inert gson.JSON
			if inert, err = evalJS(page.Context(lctx), jsLoaded); err == nil {
				settleEnd = time.Now().Add(f.cfg.SettleMax)
				if open, _ := reqs.state(); inert.Bool() && open == 0 {
					return nil // nothing on the page can change it any more
				}
			}
		}
		_, moves := reqs.state()
		if err == nil {
			_, err = evalJS(page.Context(lctx), jsSettle, quiet, max(time.Until(settleEnd).Milliseconds(), 0))
		}
		if err != nil {
			if !settleEnd.IsZero() && lctx.Err() != nil {
				return nil // the load event came; what the page has now is read
			}
			if failures++; failures == 3 || lctx.Err() != nil {
				return err
			}
			// A script navigation destroys the evaluation context: once the next document's
			// request is done, evaluate in that document.
			ictx, icancel := context.WithTimeout(lctx, f.cfg.SettleMax)
			reqs.awaitIdle(ictx)
			icancel()
			settleEnd = time.Time{}
			continue
		}
		open, now := reqs.state()
		if (open == 0 && now == moves) || !time.Now().Before(settleEnd) {
			return nil
		}
		ictx, icancel := context.WithDeadline(lctx, settleEnd)
		reqs.awaitIdle(ictx)
		icancel()
		if lctx.Err() != nil {
			return nil // the load event came; what the page has now is read
		}
	}
}
