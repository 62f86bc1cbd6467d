package farmtest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// recorded holds real pages of trafilatura's evaluation set, served at /recorded/NAME
// (recorded/PROVENANCE).
//
//go:embed recorded/*.html
var recorded embed.FS

// Hooks let a test see when the site is reached.
type Hooks struct {
	// Waiting receives one value each time /wait is requested; /wait then holds the
	// request open until the client goes away, so a test knows a job is mid-flight.
	Waiting chan struct{}
	// Held holds /held?id=ID requests until the test lets each one go.
	Held *Held
	// Pages are more pages of the site, by pattern (StartPages).
	Pages map[string]http.Handler
}

// Held records the order /held?id=ID requests arrive in and how many of each class (the id
// up to its first "-": "free-1" is class "free") were in flight at most, and holds each one
// until Release(id) or until the client goes away.
type Held struct {
	arrived chan string
	mu      sync.Mutex
	gates   map[string]chan struct{}
	now     map[string]int
	peak    map[string]int
}

// NewHeld makes an empty record.
func NewHeld() *Held {
	return &Held{arrived: make(chan string, 64), gates: map[string]chan struct{}{}, now: map[string]int{}, peak: map[string]int{}}
}

// Arrived yields the ids in the order their requests reached the site.
func (h *Held) Arrived() <-chan string { return h.arrived }

// Release lets the request of id finish.
func (h *Held) Release(id string) { close(h.gate(id)) }

// Peak is the most requests of class that were in flight at once.
func (h *Held) Peak(class string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak[class]
}

func (h *Held) gate(id string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.gates[id]
	if !ok {
		g = make(chan struct{})
		h.gates[id] = g
	}
	return g
}

func (h *Held) serve(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	class, _, _ := strings.Cut(id, "-")
	h.mu.Lock()
	h.now[class]++
	h.peak[class] = max(h.peak[class], h.now[class])
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.now[class]--
		h.mu.Unlock()
	}()
	h.arrived <- id
	select {
	case <-h.gate(id):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>Released %s.</p></body></html>", html.EscapeString(id), html.EscapeString(id))
}

// Site serves the test pages.
func Site(h *Hooks) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/held", h.Held.serve)
	for pattern, handler := range h.Pages {
		mux.Handle(pattern, handler)
	}
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		select {
		case h.Waiting <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	})
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(body))
		})
	}
	page("/article", Article)
	page("/js", JSPage)
	page("/js-slow", JSSlowPage)
	page("/tables", Tables)
	page("/forms", Forms)
	page("/prices", Prices)
	page("/contacts", Contacts)
	page("/nav", Article)
	page("/ssrf-subresources", SSRFSubresources)
	page("/crash", Crash)
	page("/challenge-soft", ChallengeSoft)
	page("/tall", Tall)
	page("/js-redirect", `<!doctype html><html><head><title>Moving</title></head><body><script>setTimeout(() => location.replace('/article'), 20);</script></body></html>`)
	page("/images", Images)
	// A fixed cookie bar (element 6: html, head, title, body, main, p, div) and a hidden menu (8).
	page("/overlay", `<!doctype html><html><head><title>Overlay</title></head><body><main><p>The article text a reader sees.</p></main>`+
		`<div style="position:fixed;bottom:0">We use cookies. <b>Accept</b></div><nav style="display:none"><a href="/">Menu</a></nav></body></html>`)
	mux.HandleFunc("/img/dot.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(dotPNG)
	})
	// The document completes but window load never fires: its image is /wait.
	page("/stalled-load", `<!doctype html><html><head><title>Stalled</title></head><body><p>Text before an image that never arrives.</p><img src="/wait" alt=""></body></html>`)
	// An app whose bundle did not load: all a reader sees is the request to enable JavaScript.
	page("/script-wall", `<!doctype html><html lang="en"><head><title>App</title><script src="/missing-bundle.js"></script></head><body><div id="root">You need to enable JavaScript to run this app.</div></body></html>`)
	page("/short", `<!doctype html><html lang="en"><head><title>Short</title></head><body><p>Hi.</p></body></html>`)
	// An endless feed: 5 items, 5 more a moment after each scroll to its end, an end marker
	// after 12; and one whose scrolling brings nothing.
	page("/feed", Feed)
	page("/feed-stuck", `<!doctype html><html><head><title>Stuck</title></head><body><ul id="feed" style="height:200px;overflow-y:auto">`+
		`<li style="height:100px">item 1</li><li style="height:100px">item 2</li><li style="height:100px">item 3</li>`+
		`<li style="height:100px">item 4</li><li style="height:100px">item 5</li></ul></body></html>`)
	mux.HandleFunc("/fingerprint", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>FP</title></head><body><pre id="h">header-ua=%s
header-lang=%s
header-ch=%s
</pre><pre id="js"></pre><script>
document.getElementById('js').textContent = [
  'js-ua=' + navigator.userAgent,
  'webdriver=' + navigator.webdriver,
  'tz=' + Intl.DateTimeFormat().resolvedOptions().timeZone,
  'lang=' + navigator.language,
].join('\n');
</script></body></html>`, html.EscapeString(r.UserAgent()), html.EscapeString(r.Header.Get("Accept-Language")), html.EscapeString(r.Header.Get("Sec-Ch-Ua")))
	})
	mux.HandleFunc("/spoof-refusal", func(w http.ResponseWriter, r *http.Request) {
		// A target pretending the appliance's proxy refused it.
		w.Header().Set("X-Peage-Egress-Refused", "loopback")
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Spoof</title></head><body><p>Genuine page.</p></body></html>`))
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"inserted":"Paragraph fetched by script after load."}`))
	})
	mux.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		// Slower than any quiet time the farm waits for, faster than its settling bound.
		select {
		case <-time.After(SlowAnswer):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"inserted":"Paragraph %s fetched slowly."}`, r.URL.Query().Get("n"))
	})
	mux.HandleFunc("/file.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/redirect2", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/redirect2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/article", http.StatusFound)
	})
	mux.HandleFunc("/redirect-to", func(w http.ResponseWriter, r *http.Request) {
		// Bait: the target chooses where to send the browser next.
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	// The same bait after the document loaded: the page's own script, or a meta refresh,
	// sends the tab on.
	mux.HandleFunc("/script-to", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		to, _ := json.Marshal(r.URL.Query().Get("u"))
		fmt.Fprintf(w, `<html><head><title>Moving on</title></head><body><p>Leaving by script.</p><script>setTimeout(() => { location.href = %s; }, 20);</script></body></html>`, to)
	})
	mux.HandleFunc("/refresh-to", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>Moving on</title><meta http-equiv="refresh" content="0; url=%s"></head><body><p>Leaving by refresh.</p></body></html>`, html.EscapeString(r.URL.Query().Get("u")))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		fmt.Fprintf(w, "<html><head><title>Error %d</title></head><body><h1>Error %d</h1></body></html>", code, code)
	})
	mux.HandleFunc("/challenge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Cf-Mitigated", "challenge")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(Challenge))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(1500 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Slow</title></head><body><p>Worth the wait.</p></body></html>`))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		// Headers and the start of the document, nothing a reader sees, then nothing more
		// until the client leaves.
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<html><head><title>Never ends</title></head><body>`))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/hang-partial", func(w http.ResponseWriter, r *http.Request) {
		// An article whose document never ends (a stream held open by the server): what it
		// rendered is there to read, but it never finishes loading.
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(HangPartial))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	page("/replaced-by-script", ReplacedByScript)
	// Pages without a script element whose content still changes after load.
	page("/js-handler", `<!doctype html><html><head><title>Handler</title></head><body onload="setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>Inserted by an onload attribute.</p>'), 30)"><p>Before the handler.</p></body></html>`)
	page("/js-module", `<!doctype html><html><head><title>Module</title><script type="application/ld+json">{"@type":"WebPage"}</script></head><body><p>Before the module.</p><script type="module">setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>Inserted by a module script.</p>'), 30);</script></body></html>`)
	page("/js-frame", `<!doctype html><html><head><title>Frame</title></head><body><p>Before the frame.</p><iframe src="/js-frame-child"></iframe></body></html>`)
	page("/js-frame-child", `<!doctype html><html><body><script>setTimeout(() => parent.document.body.insertAdjacentHTML('beforeend', '<p>Inserted by the frame\'s script.</p>'), 30);</script></body></html>`)
	page("/js-onerror", `<!doctype html><html><head><title>Onerror</title></head><body><img src="/missing.png" alt="" onerror="setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>Inserted by an image\'s onerror attribute.</p>'), 30)"></body></html>`)
	mux.HandleFunc("/recorded/{name}", func(w http.ResponseWriter, r *http.Request) {
		b, err := recorded.ReadFile("recorded/" + r.PathValue("name"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		// As the pages' servers may well have sent them: bare text/html, no charset. Their
		// scripts are off, as when they were recorded (they would send the browser to the
		// original site).
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Security-Policy", "script-src 'none'")
		_, _ = w.Write(b)
	})
	// A page whose script never yields: its renderer spins until the job's deadline.
	page("/spin", `<html><head><title>Spinning</title></head><body><p>Never settles.</p><script>setTimeout(() => { for (;;) {} }, 0);</script></body></html>`)
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		var b strings.Builder
		b.WriteString("<html><head><title>Huge</title></head><body>")
		row := "<p>" + strings.Repeat("enormous page text ", 20) + "</p>\n"
		for b.Len() < 3<<19 { // 1.5 MiB: over the tests' 1 MiB limit, small enough to parse fast on a busy machine
			b.WriteString(row)
		}
		b.WriteString("</body></html>")
		_, _ = w.Write([]byte(b.String()))
	})
	// /navaway sends itself to https on the same port, which fails after the document loaded.
	page("/navaway", `<html><head><title>Away</title></head><body><p>Leaving.</p>
<script>location.href = 'https://' + location.host + '/';</script></body></html>`)
	// /boilerplate: the article's text changes with v only; b changes the chrome around it
	// (navigation, most-read list, counter, footer date), as a live site does between visits.
	mux.HandleFunc("/boilerplate", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, Boilerplate, r.URL.Query().Get("b"), r.URL.Query().Get("v"))
	})
	mux.HandleFunc("/counter", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Counter</title></head><body><main><p>Version %s of the page.</p></main></body></html>", r.URL.Query().Get("v"))
	})
	return mux
}

// Boilerplate is a news page whose chrome takes the first argument and whose article text
// takes the second.
const Boilerplate = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Harbour works</title></head>
<body>
<header><a href="/">Harbour Notes</a><nav><a href="/news">News</a> <a href="/sport">Sport %[1]s</a></nav></header>
<div class="cookie-banner">We use cookies (banner %[1]s). <button>Accept</button></div>
<main><article>
<h1>Harbour works enter their second phase</h1>
<p>The second phase of the works on the north quay starts on Monday, revision %[2]s of the schedule published by the harbour authority.</p>
<p>Lorries will reach the quay through the fish market gate between 7 a.m. and 4 p.m., and the footbridge over the lock stays open to pedestrians throughout.</p>
<p>The authority expects the new berths to be ready for the hybrid ferries before the summer timetable begins in May.</p>
</article></main>
<aside><h3>Most read</h3><ul><li><a href="/a/%[1]s">Story number %[1]s</a></li></ul><p>Visitors today: %[1]s</p></aside>
<footer>Page generated at build %[1]s. © Harbour Notes</footer>
</body></html>`

// Article is a news-like page with boilerplate around the main text, metadata and JSON-LD.
const Article = `<!doctype html>
<html lang="fr">
<head>
<meta charset="utf-8">
<title>Le marché des fromages affinés en 2026</title>
<meta name="description" content="Une enquête sur les caves d'affinage françaises.">
<meta property="og:title" content="Fromages affinés : l'enquête">
<meta property="og:type" content="article">
<meta property="og:image" content="/img/og.png">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:site" content="@fromagerie">
<link rel="canonical" href="https://example.org/articles/fromages">
<link rel="icon" href="/favicon.ico">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Le marché des fromages affinés","author":{"@type":"Person","name":"Camille Martin"}}</script>
<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"Organization","name":"La Gazette du Fromage"},{"@type":"WebSite","url":"https://example.org/"}]}</script>
</head>
<body>
<header id="top"><a href="/">La Gazette</a>
<nav aria-label="Principal"><ul><li><a href="/rubrique/economie">Économie</a></li><li><a href="/rubrique/terroirs">Terroirs</a></li><li><a href="https://partenaire.example.com/abonnement">S'abonner</a></li></ul></nav>
</header>
<aside class="sidebar"><h3>À lire aussi</h3><ul><li><a href="/autre">Un autre article sans rapport</a></li></ul></aside>
<main>
<article>
<h1 id="titre">Le marché des fromages affinés en 2026</h1>
<p>Dans les caves du Jura, l'affinage du comté suit un rythme lent que les marchés mondiaux ne connaissent pas. Les affineurs retournent chaque meule à la main, parfois pendant trente-six mois, et chaque cave garde ses secrets de température et d'humidité.</p>
<h2 id="prix">Des prix qui montent</h2>
<p>Le prix payé aux producteurs de lait a augmenté de huit pour cent en un an. Les coopératives expliquent cette hausse par la demande à l'export et par des étés plus secs qui réduisent les rendements des prairies d'altitude.</p>
<img src="/img/cave.jpg" alt="Une cave d'affinage" width="640" height="480">
<h2>Les caves face au climat</h2>
<p>Les caves naturelles, creusées dans la roche, restent fraîches sans climatisation. Mais plusieurs affineurs investissent désormais dans des systèmes de régulation, car les printemps doux perturbent le développement des croûtes.</p>
<h3 id="avenir">Et demain ?</h3>
<p>La filière prépare un cahier des charges révisé pour 2027, qui devra concilier tradition et adaptation. Les discussions entre producteurs, affineurs et distributeurs doivent aboutir avant la fin de l'année.</p>
<p>Lire aussi <a href="/rubrique/terroirs#comte">notre dossier sur le comté</a> et <a href="https://www.inao.gouv.fr/">le site de l'INAO</a>.</p>
</article>
</main>
<footer><nav aria-label="Pied de page"><a href="/mentions-legales">Mentions légales</a> <a href="/contact">Contact</a></nav><p>© 2026 La Gazette du Fromage</p></footer>
</body>
</html>`

// Images has one image that loads, shown in a box its attributes declare, and one that does
// not (its alt text stands in, in a box the fonts decide).
const Images = `<!doctype html><html lang="fr"><head><title>Images</title></head><body>
<img src="/img/dot.png" alt="Un point" width="320" height="240">
<img src="/img/missing.png" alt="Image absente" width="200" height="100">
</body></html>`

// dotPNG is a 4×3 image, so a test tells its natural size from its displayed one.
var dotPNG = func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

// JSPage has content only scripts create: at DOMContentLoaded, after a timer, and after a fetch.
const JSPage = `<!doctype html>
<html lang="en"><head><title>Script page</title></head>
<body><main id="app"></main>
<script>
document.addEventListener('DOMContentLoaded', () => {
  const h = document.createElement('h1'); h.textContent = 'Rendered by JavaScript';
  document.getElementById('app').appendChild(h);
  const p = document.createElement('p');
  p.textContent = 'This paragraph was inserted by a script when the document was parsed, so a plain HTTP fetch would never see it. It is long enough to be the main content of the page.';
  document.getElementById('app').appendChild(p);
});
window.addEventListener('load', () => {
  setTimeout(() => {
    fetch('/data.json').then(r => r.json()).then(d => {
      const p = document.createElement('p'); p.id = 'fetched'; p.textContent = d.inserted;
      document.getElementById('app').appendChild(p);
    });
  }, 30);
});
</script></body></html>`

// SlowAnswer is how long /slow.json takes to answer.
const SlowAnswer = 600 * time.Millisecond

// JSSlowPage fetches its text after load from an endpoint slower than the farm's quiet time,
// twice in a row (the second request starts only once the first answer is in the page).
const JSSlowPage = `<!doctype html>
<html lang="en"><head><title>Slow script page</title></head>
<body><main id="app"><h1>Waiting for the data</h1></main>
<script>
const add = n => fetch('/slow.json?n=' + n).then(r => r.json()).then(d => {
  const p = document.createElement('p'); p.textContent = d.inserted;
  document.getElementById('app').appendChild(p);
});
window.addEventListener('load', () => setTimeout(() => add('one').then(() => setTimeout(() => add('two'), 10)), 10));
</script></body></html>`

// Tables has a header spanning two columns over a second header row, and a rowspan.
const Tables = `<!doctype html><html><head><title>Tables</title></head><body>
<table id="t1">
<thead>
<tr><th rowspan="2">Ville</th><th colspan="2">Température</th></tr>
<tr><th>Min</th><th>Max</th></tr>
</thead>
<tbody>
<tr><td>Paris</td><td>3</td><td>11</td></tr>
<tr><td>Lyon</td><td>1</td><td>9</td></tr>
</tbody>
</table>
<table id="t2">
<tr><th>Produit</th><th>Prix</th></tr>
<tr><td rowspan="2">Pomme</td><td>1,20 €</td></tr>
<tr><td>1,10 €</td></tr>
</table>
</body></html>`

// Forms has labels by for= and by wrapping, a select, a textarea, hidden and required fields.
const Forms = `<!doctype html><html><head><title>Forms</title></head><body>
<form id="contact" action="/send" method="post">
<label for="name">Votre nom</label><input id="name" name="name" type="text" required>
<label>E-mail <input name="email" type="email" required></label>
<label for="topic">Sujet</label>
<select id="topic" name="topic"><option value="">Choisir</option><option value="devis">Demande de devis</option><option value="sav" selected>Service après-vente</option></select>
<textarea name="message" aria-label="Message"></textarea>
<input type="hidden" name="csrf" value="abc">
<input type="checkbox" name="newsletter" id="nl"><label for="nl">Newsletter</label>
<button type="submit">Envoyer</button>
</form>
<form action="/search"><input type="search" name="q" placeholder="Rechercher"></form>
<script>document.getElementById('contact').addEventListener('submit', () => { document.title = 'SUBMITTED'; });</script>
</body></html>`

// Prices has a schema.org offer and visible prices in several currencies and locales.
const Prices = `<!doctype html><html lang="fr"><head><title>Boutique</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Meule de comté","offers":{"@type":"Offer","price":"1299.99","priceCurrency":"EUR"}}</script>
</head><body>
<h1>Meule de comté</h1>
<p class="price">Prix : 1 299,99 €</p>
<p>Export price: $1,349.50</p>
<p>UK: £1,050.00 incl. VAT</p>
<p>Suisse : CHF 1'420.00</p>
<p>Livraison 12,50 EUR</p>
<p>Ce texte ne contient pas de prix, seulement 2026 et 36 mois.</p>
<p style="display:none">Prix caché 9,99 €</p>
</body></html>`

// Contacts shows e-mails, phones in several writings and social profiles.
const Contacts = `<!doctype html><html lang="fr"><head><title>Contact</title></head><body>
<h1>Nous contacter</h1>
<p>Standard : 01 42 68 53 00 — Mobile : +33 6 12 34 56 78</p>
<p>Londres : +44 20 7946 0958</p>
<p><a href="tel:+33142685301">Appeler le service client</a></p>
<p>Écrivez à <a href="mailto:contact@fromagerie.example?subject=Bonjour">contact@fromagerie.example</a> ou presse@fromagerie.example.</p>
<p>Numéro de commande 2026 1234 5678 9012 (pas un téléphone).</p>
<p style="display:none">Caché : cache@fromagerie.example 01 99 99 99 99</p>
<footer>
<a href="https://www.linkedin.com/company/fromagerie">LinkedIn</a>
<a href="https://x.com/fromagerie">X</a>
<a href="https://www.instagram.com/fromagerie/">Instagram</a>
<a href="https://www.facebook.com/fromagerie">Facebook</a>
<a href="https://github.com/fromagerie">GitHub</a>
<a href="https://www.youtube.com/@fromagerie">YouTube</a>
</footer>
</body></html>`

// SSRFSubresources is an allowed page that tries to reach private addresses.
const SSRFSubresources = `<!doctype html><html><head><title>Bait</title></head><body>
<p>An innocent page.</p>
<iframe src="http://10.0.0.1/admin"></iframe>
<img src="http://192.168.1.1/logo.png">
<img src="http://169.254.169.254/latest/meta-data/">
<script>
fetch('http://172.16.0.1/api').catch(() => {});
fetch('https://100.64.0.1/').catch(() => {});
try { new WebSocket('ws://10.9.8.7/socket'); } catch (e) {}
</script>
</body></html>`

// Crash allocates until the renderer's heap cap kills it.
const Crash = `<!doctype html><html><head><title>Crash</title></head><body><p>Allocating…</p>
<script>
const hog = [];
for (;;) { hog.push(new Array(1 << 20).fill(hog.length)); }
</script></body></html>`

// Challenge imitates a Cloudflare managed challenge page.
const Challenge = `<!doctype html><html lang="en-US"><head><title>Just a moment...</title></head>
<body><div id="challenge-running">Checking if the site connection is secure</div>
<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script></body></html>`

// ChallengeSoft is a 200 page that is nothing but a captcha wall.
const ChallengeSoft = `<!doctype html><html><head><title>Vérification</title></head><body>
<p>Please verify you are a human.</p>
<div class="g-recaptcha" data-sitekey="x"></div>
<iframe src="https://www.google.com/recaptcha/api2/anchor?k=x"></iframe>
</body></html>`

// Tall is taller than the screenshot cap.
var Tall = `<!doctype html><html><head><title>Tall</title></head><body style="margin:0">
<div style="height:30000px;background:linear-gradient(#fff,#00f)">tall</div></body></html>`

// Feed grows as it is scrolled, like a results feed that asks its server for the next page.
const Feed = `<!doctype html><html><head><title>Feed</title></head><body>
<ul id="feed" style="height:200px;overflow-y:auto"></ul>
<script>
const feed = document.getElementById('feed');
let n = 0, busy = false;
const add = k => { for (let i = 0; i < k && n < 12; i++) feed.insertAdjacentHTML('beforeend', '<li class="item" style="height:100px">item ' + (++n) + '</li>'); };
add(5);
feed.addEventListener('scroll', () => {
	if (busy || n >= 12 || feed.scrollTop + feed.clientHeight < feed.scrollHeight - 20) return;
	busy = true;
	setTimeout(() => { add(5); if (n >= 12) feed.insertAdjacentHTML('beforeend', '<li class="end">End of the ' + 'list.</li>'); busy = false; }, 100);
});
</script></body></html>`

// Recorded serves a recorded HTML page from the test's testdata directory with status; a
// name ending in .gz is stored compressed and sent with Content-Encoding: gzip, as sites send
// their large pages. A page that cannot be read panics: the test is broken, not the route.
func Recorded(name string, status int) http.Handler {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if strings.HasSuffix(name, ".gz") {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.WriteHeader(status)
		_, _ = w.Write(b)
	})
}

// ReplacedByScript is an article whose own script, once the page has loaded, replaces it
// with an error page (as a client-side app does when its data call fails): the server's HTML
// holds the article, the rendered DOM does not.
const ReplacedByScript = `<!doctype html>
<html lang="en"><head><title>Night trains return to the coast line</title></head>
<body><header><nav><a href="/">Home</a> <a href="/news">News</a></nav></header>
<main id="root"><article>
<h1>Night trains return to the coast line</h1>
<p>The regional operator will run a sleeper service between the capital and the coast every Friday and Saturday from June, eleven years after the last night train on the line was withdrawn.</p>
<p>The carriages, bought second-hand from a northern operator and refitted in the city's own workshops, have four-berth compartments and a small bar coach; the first tickets go on sale on the first of May.</p>
<p>Fares will range between 39 and 89 pounds for a berth, and bicycles travel free in a dedicated van at the back of the train.</p>
</article></main>
<footer>Legal notice</footer>
<script>
window.addEventListener('load', () => setTimeout(() => {
  document.getElementById('root').innerHTML = '<div class="error"><h1>Oops</h1><p>This page is not available right now. Please try again later.</p></div>';
}, 20));
</script></body></html>`

// HangPartial is the start of an article whose document never ends.
const HangPartial = `<!doctype html><html lang="en"><head><title>Still streaming</title></head><body><main>
<h1>Harbour works resume</h1>
<p>Dredging of the north basin resumes on Monday, and the ferries will berth at the south quay until the end of May while the work goes on.</p>
<p>The harbour master expects the basin to reach its full depth again before the summer season`
