package maps

// The local maps site of the tests: pages rebuilt from the recordings in testdata (see
// testdata/PROVENANCE for what each is and what is derived).

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

func fixture(name string) []byte {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			panic(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			panic(err)
		}
	}
	return b
}

// decode reads JSON keeping numbers as written, so that re-encoding changes no figure.
func decode(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

func encode(v any) string {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(true) // no "</script>" can end the script early
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSpace(buf.String())
}

// withPlaceAnswer is the recorded place page (entry1.html) with its place answer, the
// guarded JSON string at APP_INITIALIZATION_STATE[3][6], replaced by answer.
func withPlaceAnswer(shell []byte, answer string) []byte {
	s := string(shell)
	i := strings.Index(s, stateMarker)
	if i < 0 {
		panic("the shell has no state")
	}
	start := i + len(stateMarker)
	d := json.NewDecoder(strings.NewReader(s[start:]))
	d.UseNumber()
	var state []any
	if err := d.Decode(&state); err != nil {
		panic(err)
	}
	state[3].([]any)[6] = xssiGuard + "\n" + answer
	return []byte(s[:start] + encode(state) + s[start+int(d.InputOffset()):])
}

// site serves the maps pages the tests read.
type site struct {
	entry1  []byte
	search  any   // output.json: the recorded search answer
	rows    []any // its places, each row's [14]
	placeBy map[string][]byte
	card    string
	consent []byte
	sorry   []byte

	base      string       // the site's root URL, known once it runs
	blockID   atomic.Value // the feature id whose place page is the unusual-traffic page
	hangAll   atomic.Bool  // place pages never answer
	mu        sync.Mutex
	requested []string
}

// The search page embeds the first embeddedRows places; the feed loads feedBatch more per
// scroll, as Google's loads 20 per call (fewer here so that a short test scrolls).
const (
	embeddedRows = 10
	feedBatch    = 5
)

func newSite() *site {
	s := &site{entry1: fixture("entry1.html.gz"), search: decode(fixture("output.json.gz")),
		card: string(fixture("item.html")), consent: fixture("consent.html"), sorry: fixture("sorry.html"),
		placeBy: map[string][]byte{}}
	s.blockID.Store("")
	raw := decode(fixture("raw.json.gz")).([]any)
	for _, row := range s.search.([]any)[0].([]any)[1].([]any)[1:] {
		b := row.([]any)[14]
		s.rows = append(s.rows, b)
		// The place page of a search result: the recorded place page with, as its place
		// answer, the recorded place answer (raw.json) whose place ([6]) is that result's.
		answer := append([]any(nil), raw...)
		answer[6] = b
		s.placeBy[str(b, 10)] = withPlaceAnswer(s.entry1, encode(answer))
	}
	return s
}

func (s *site) log(r *http.Request) {
	s.mu.Lock()
	s.requested = append(s.requested, r.URL.Path)
	s.mu.Unlock()
}

// reset forgets the requests seen so far.
func (s *site) reset() {
	s.mu.Lock()
	s.requested = nil
	s.mu.Unlock()
}

// countOf reports how many requests went to paths starting with prefix.
func (s *site) countOf(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.requested {
		if strings.HasPrefix(p, prefix) {
			n++
		}
	}
	return n
}

func (s *site) pages() map[string]http.Handler {
	htmlPage := func(w http.ResponseWriter, status int, b []byte) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The recordings name Google's hosts for their images, styles and scripts: the
		// browser is kept from asking for them, which only the network's DNS would refuse.
		w.Header().Set("Content-Security-Policy", "default-src 'self' 'unsafe-inline' 'unsafe-eval'")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	}
	return map[string]http.Handler{
		"/maps/search/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.log(r)
			switch strings.TrimPrefix(r.URL.Path, "/maps/search/") {
			case "coffee+Ilion":
				htmlPage(w, 200, s.searchPage(len(s.rows)))
			case "coffee+nowhere":
				htmlPage(w, 200, s.searchPage(0))
			case "consent+wall":
				// Google sends a browser without its consent cookie to consent.google.com.
				http.Redirect(w, r, "/ml?continue="+url.QueryEscape(r.URL.String()), http.StatusFound)
			case "never+answers":
				<-r.Context().Done()
			case "unusual+traffic":
				http.Redirect(w, r, "/sorry/index?continue="+url.QueryEscape(r.URL.String()), http.StatusFound)
			default:
				http.NotFound(w, r)
			}
		}),
		"/ml":          http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { htmlPage(w, 200, s.consent) }),
		"/sorry/index": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { htmlPage(w, 429, s.sorry) }),
		"/maps/feed": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.log(r)
			start, _ := strconv.Atoi(r.URL.Query().Get("start"))
			end := min(start+feedBatch, len(s.rows))
			var b strings.Builder
			for i := start; i < end; i++ {
				b.WriteString(s.cardOf(s.rows[i]))
			}
			if end >= len(s.rows) {
				w.Header().Set("X-End", "1")
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, b.String())
		}),
		"/maps/place/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.log(r)
			m := featureInURL.FindStringSubmatch(r.URL.Path)
			if m == nil {
				http.NotFound(w, r)
				return
			}
			if s.hangAll.Load() {
				<-r.Context().Done()
				return
			}
			if m[1] == s.blockID.Load().(string) {
				http.Redirect(w, r, "/sorry/index?continue="+url.QueryEscape(r.URL.String()), http.StatusFound)
				return
			}
			page, ok := s.placeBy[m[1]]
			if !ok {
				http.NotFound(w, r)
				return
			}
			htmlPage(w, 200, page)
		}),
	}
}

// searchPage is a search page: the recorded search answer, its results cut to the first
// embeddedRows, embedded as the maps embed it (APP_INITIALIZATION_STATE[3][2]); the feed's
// cards for those, and a script that loads feedBatch more cards each time the feed is
// scrolled to its end, then shows the end-of-list marker. total 0 is a search without
// results.
func (s *site) searchPage(total int) []byte {
	answer := append([]any(nil), s.search.([]any)...)
	first := append([]any(nil), answer[0].([]any)...)
	rows := first[1].([]any)
	first[1] = rows[:1+min(embeddedRows, total)]
	answer[0] = first
	state := []any{nil, nil, nil, []any{nil, nil, xssiGuard + "\n" + encode(answer)}}
	var cards strings.Builder
	for i := range min(embeddedRows, total) {
		cards.WriteString(s.cardOf(s.rows[i]))
	}
	done := "false"
	if total <= embeddedRows {
		done = "true"
	}
	return []byte(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>coffee - Google Maps</title>
<script>window.APP_INITIALIZATION_STATE=` + encode(state) + `;</script></head>
<body><div role="feed" aria-label="Results for coffee" style="height:600px;overflow-y:auto">` + cards.String() + `</div>
<script>
const feed = document.querySelector('div[role="feed"]');
let next = ` + strconv.Itoa(embeddedRows) + `, busy = false, done = ` + done + `;
const endMarker = '<div class="PbZDve"><p class="fontBodyMedium"><span><span class="HlvSq">You\'ve reached the end of the list.</span></span></p></div>';
if (done) feed.insertAdjacentHTML('beforeend', endMarker);
feed.addEventListener('scroll', async () => {
	if (busy || done || feed.scrollTop + feed.clientHeight < feed.scrollHeight - 50) return;
	busy = true;
	const r = await fetch('/maps/feed?start=' + next);
	feed.insertAdjacentHTML('beforeend', await r.text());
	next += ` + strconv.Itoa(feedBatch) + `;
	done = r.headers.get('X-End') === '1';
	if (done) feed.insertAdjacentHTML('beforeend', endMarker);
	busy = false;
});
</script></body></html>`)
}

// cardOf is the recorded result card (item.html) with its values replaced by the place's:
// name, place URL, rating and review count, category, street, phone and website.
func (s *site) cardOf(b any) string {
	name := str(b, 11)
	rating, _ := at(b, 4, 7).(json.Number)
	reviews, _ := at(b, 4, 8).(json.Number)
	lat, _ := at(b, 9, 2).(json.Number)
	lon, _ := at(b, 9, 3).(json.Number)
	href := fmt.Sprintf("https://www.google.com/maps/place/%s/data=!4m7!3m6!1s%s!8m2!3d%s!4d%s!16s%s!19s%s?authuser=0&hl=en&rclk=1",
		url.QueryEscape(name), str(b, 10), lat, lon, url.QueryEscape(str(b, 89)), str(b, 78))
	phone := str(b, 178, 0, 0)
	r := strings.NewReplacer(
		`href="https://www.google.com/maps/place/Touch+Photography/data=!4m7!3m6!1s0x80c32af5dab38457:0x7eb1082369d23dba!8m2!3d33.9874604!4d-117.8961057!16s%2Fg%2F1td6yczy!19sChIJV4Sz2vUqw4ARuj3SaSMIsX4?authuser=0&amp;hl=en&amp;rclk=1"`,
		`href="`+html.EscapeString(href)+`"`,
		"Touch Photography", html.EscapeString(name),
		"4.3 stars 16 Reviews", fmt.Sprintf("%s stars %s Reviews", rating, reviews),
		`>4.3<`, ">"+rating.String()+"<",
		`>(16)<`, ">("+reviews.String()+")<",
		`<span>Photography studio</span>`, "<span>"+html.EscapeString(str(b, 13, 0))+"</span>",
		`<span>18702 Colima Rd #106</span>`, "<span>"+html.EscapeString(str(b, 2, 0))+"</span>",
		`(626) 810-7688`, html.EscapeString(phone),
		`https://touchweddingstudio.wixsite.com/touch`, html.EscapeString(str(b, 7, 0)),
	)
	// Kept apart by some height, so that the feed scrolls as Google's does.
	return `<div style="min-height:140px">` + r.Replace(s.card) + `</div>`
}
