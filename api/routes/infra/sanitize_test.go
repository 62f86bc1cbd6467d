package infra

import (
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

// hostile is a battery of markup that tries to run code, submit data, embed documents or make
// the browser fetch something. Every one must come out inert.
var hostile = []string{
	`<script>alert(1)</script>`,
	`<SCRIPT SRC=//evil.example/x.js></SCRIPT>`,
	`<ScRiPt>alert(1)</sCrIpT>`,
	`<scr<script>ipt>alert(1)</script>`,
	`<script/xss src="http://evil.example/x.js"></script>`,
	`<<SCRIPT>alert("XSS");//<</SCRIPT>`,
	`<script type="module">import "http://evil.example/m.js"</script>`,
	`<img src=x onerror=alert(1)>`,
	`<IMG SRC="javascript:alert('XSS');">`,
	`<img """><script>alert("XSS")</script>">`,
	`<img src="http://evil.example/pixel.gif">`,
	`<img src="//evil.example/pixel.gif">`,
	`<img srcset="http://evil.example/a.png 1x, http://evil.example/b.png 2x">`,
	`<a href="javascript:alert(1)">x</a>`,
	`<a href="JaVaScRiPt:alert(1)">x</a>`,
	`<a href="jav&#x09;ascript:alert(1)">x</a>`,
	`<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>`,
	`<a href=" javascript:alert(1)">x</a>`,
	`<a href="vbscript:msgbox(1)">x</a>`,
	`<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>`,
	`<a href="http://ok.example/" ping="http://evil.example/ping" onclick="alert(1)">ok</a>`,
	`<body onload=alert(1)><p>x</p></body>`,
	`<div onmouseover="alert(1)">hover</div>`,
	`<x onclick=alert(1)>click</x>`,
	`<p ONCLICK=alert(1)>p</p>`,
	`<svg onload=alert(1)><circle r="1"/></svg>`,
	`<svg><script>alert(1)</script></svg>`,
	`<svg><script href="data:,alert(1)"/></svg>`,
	`<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
	`<svg><animate attributeName="href" to="javascript:alert(1)"/><set attributeName="onload" to="alert(1)"/></svg>`,
	`<svg><foreignObject><iframe src="http://evil.example"></iframe><body onload=alert(1)></foreignObject></svg>`,
	`<svg><image href="http://evil.example/x.png"/><image xlink:href="http://evil.example/y.png"/></svg>`,
	`<svg><use href="http://evil.example/sprite.svg#a"/><use xlink:href="//evil.example/s.svg#b"/></svg>`,
	`<svg><rect fill="url(http://evil.example/p.svg#g)" filter="url('//evil.example/f.svg#f')"/></svg>`,
	`<svg><style>@import url(http://evil.example/s.css);</style></svg>`,
	`<form action="http://evil.example/"><input name=a><button formaction="http://evil.example/b">go</button><textarea>t</textarea><select><option>o</select></form>`,
	`<iframe src="http://evil.example"></iframe>`,
	`<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
	`<frameset><frame src="http://evil.example"></frameset>`,
	`<object data="http://evil.example/x.swf"></object><embed src="http://evil.example/x.swf"><applet code=x></applet>`,
	`<meta http-equiv="refresh" content="0;url=http://evil.example">`,
	`<html><head><meta http-equiv="refresh" content="0;url=http://evil.example"><base href="http://evil.example/"></head><body>x</body></html>`,
	`<p>x</p><meta http-equiv="refresh" content="0;url=http://evil.example">`,
	`<link rel=stylesheet href="http://evil.example/x.css"><link rel=preload href="http://evil.example/f.woff2" as=font>`,
	`<style>@import url(http://evil.example/x.css); body{background:url(http://evil.example/bg.png)}</style>`,
	`<style>@import 'http://evil.example/y.css';</style>`,
	`<style>@IMPORT "http://evil.example/z.css" screen;</style>`,
	`<style>@font-face{font-family:x;src:url(https://evil.example/f.woff2) format("woff2")}</style>`,
	`<style>div{background:image-set("http://evil.example/a.png" 1x)}</style>`,
	`<style>div{background:URL(http://evil.example/u.png)}</style>`,
	`<style>div{background:u\72l(http://evil.example/e.png)}</style>`,
	`<style>div{background:url( "http://evil.example/q.png" )}</style>`,
	`<style>body{content:"</style><script>alert(1)</script>"}</style>`,
	`<style></style><script>alert(1)</script><style>`,
	`<style>div{width:expression(alert(1));behavior:url(http://evil.example/x.htc);-moz-binding:url(http://evil.example/x.xml#x)}</style>`,
	`<div style="background-image:url('http://evil.example/i.png')">i</div>`,
	`<div style="background:u\72l(http://evil.example/e.png)">e</div>`,
	`<div style="width:expression(alert(1))">w</div>`,
	`<div style="list-style:url(http://evil.example/l.png);cursor:url(http://evil.example/c.cur),auto">l</div>`,
	`<div style="background:url(javascript:alert(1))">j</div>`,
	`<video poster="http://evil.example/p.png"><source src="http://evil.example/v.mp4"></video><audio src=http://evil.example/a.mp3></audio>`,
	`<table background="http://evil.example/bg.png"><tr><td background="http://evil.example/td.png">t</td></tr></table>`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>`,
	`<!--<img src="--><img src=x onerror=alert(1)//">`,
	`<input type="image" src="http://evil.example/i.png">`,
	`<isindex action="http://evil.example" type=image src="http://evil.example/i.png">`,
	`<portal src="http://evil.example"></portal><dialog open><form method=dialog></form></dialog>`,
	`<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+PC9zdmc+" onload="alert(1)">`,
	`<a href="http://ok.example/" target="_top">t</a>`,
}

var forbiddenElements = map[string]bool{
	"script": true, "iframe": true, "frame": true, "frameset": true, "object": true, "embed": true, "applet": true,
	"form": true, "input": true, "button": true, "textarea": true, "select": true, "option": true, "link": true,
	"base": true, "foreignObject": true, "foreignobject": true, "animate": true, "set": true, "video": true,
	"audio": true, "source": true, "portal": true, "isindex": true, "noscript": true, "dialog": true, "math": true,
}

// inert checks a served document, parsed as a browser parses it.
func inert(t *testing.T, in, doc string) {
	t.Helper()
	root, err := xhtml.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("unparseable output for %q: %v", in, err)
	}
	styles := 0
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			if forbiddenElements[n.Data] {
				t.Fatalf("input %q\nkeeps <%s>:\n%s", in, n.Data, doc)
			}
			if n.Data == "style" {
				styles++
				var css strings.Builder
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					css.WriteString(c.Data)
				}
				checkCSS(t, in, css.String(), doc)
			}
			if n.Data == "meta" {
				for _, a := range n.Attr {
					if a.Key == "http-equiv" {
						t.Fatalf("input %q keeps meta http-equiv:\n%s", in, doc)
					}
				}
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				val := strings.ToLower(strings.Map(func(r rune) rune {
					if r <= ' ' {
						return -1
					}
					return r
				}, a.Val))
				switch {
				case strings.HasPrefix(key, "on"):
					t.Fatalf("input %q keeps %s=:\n%s", in, a.Key, doc)
				case strings.Contains(val, "javascript:") || strings.Contains(val, "vbscript:"):
					t.Fatalf("input %q keeps a script URL in %s:\n%s", in, a.Key, doc)
				case key == "style":
					checkCSS(t, in, a.Val, doc)
				case key == "href" && n.Data == "a" && a.Namespace == "":
					if !allowedLink(a.Val) {
						t.Fatalf("input %q keeps link %s:\n%s", in, a.Val, doc)
					}
				case key == "href" || key == "src":
					if !strings.HasPrefix(val, "data:image/") && !strings.HasPrefix(val, "#") {
						t.Fatalf("input %q keeps fetched %s=%s:\n%s", in, a.Key, a.Val, doc)
					}
				case key == "srcset" || key == "background" || key == "poster" || key == "action" || key == "formaction" ||
					key == "srcdoc" || key == "data" || key == "ping" || key == "http-equiv":
					t.Fatalf("input %q keeps %s:\n%s", in, a.Key, doc)
				case strings.Contains(val, "url(") && !strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(val, "url("), `"`), "#"):
					t.Fatalf("input %q keeps %s=%s:\n%s", in, a.Key, a.Val, doc)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if styles > 1 {
		t.Fatalf("input %q: %d style elements:\n%s", in, styles, doc)
	}
	if strings.Contains(strings.ToLower(doc), "<script") {
		t.Fatalf("input %q: <script in output:\n%s", in, doc)
	}
}

func checkCSS(t *testing.T, in, css, doc string) {
	t.Helper()
	l := strings.ToLower(css)
	for _, bad := range []string{"@import", "expression(", "</", "javascript:", "image-set"} {
		if strings.Contains(l, bad) {
			t.Fatalf("input %q: CSS keeps %q:\n%s", in, bad, doc)
		}
	}
	for i := strings.Index(l, "url("); i >= 0; i = strings.Index(l, "url(") {
		rest := strings.TrimLeft(l[i+4:], ` "'`)
		if !strings.HasPrefix(rest, "data:") && !strings.HasPrefix(rest, "#") {
			t.Fatalf("input %q: CSS fetches %q:\n%s", in, l[i:], doc)
		}
		l = l[i+4:]
	}
}

func TestHostileHTMLComesOutInert(t *testing.T) {
	for _, in := range hostile {
		doc := SanitizePage(in, "t")
		inert(t, in, doc)
		// Sanitising the output again changes nothing that matters: still inert.
		inert(t, in, SanitizePage(doc, "t"))
	}
	// All of it at once, inside a full document.
	all := "<html><head><title>x</title></head><body>" + strings.Join(hostile, "\n") + "</body></html>"
	inert(t, "everything", SanitizePage(all, "t"))
}

func TestHostileTitle(t *testing.T) {
	doc := SanitizePage("<p>x</p>", `</title><script>alert(1)</script>`)
	inert(t, "title", doc)
	if !strings.Contains(doc, "&lt;/title&gt;&lt;script&gt;") {
		t.Fatalf("title not escaped:\n%s", doc)
	}
}

func TestStaticMarkupRenders(t *testing.T) {
	in := `<!doctype html><html><head><style>h1{color:#c00;font:bold 2em/1 serif}
.hero{background:linear-gradient(90deg,rgb(0 0 0/.5),transparent) , url(data:image/png;base64,iVBORw0KGgo=)}
@media (max-width:600px){.hero{padding:calc(1em + 2px)}}
@font-face{font-family:Inline;src:url(data:font/woff2;base64,d09GMgABAAAAAA==) format("woff2")}</style></head>
<body><h1 class="t" id="top">Title</h1>
<div class="hero" style="color: #333; background-color: rgba(255,0,0,.2); transform: rotate(2deg); border:1px solid #ccc">Hero</div>
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==" alt="dot" width="10">
<svg width="100" height="100" viewBox="0 0 100 100"><defs><linearGradient id="g"><stop offset="0" stop-color="red"/><stop offset="1" stop-color="blue"/></linearGradient></defs>
<circle cx="50" cy="50" r="40" fill="url(#g)" stroke="black" stroke-width="2"/><path d="M10 10 L90 90" style="stroke:green"/><text x="10" y="20" font-size="12">SVG text</text><use href="#g"/></svg>
<table border="1"><tr><th colspan="2">h</th></tr><tr><td>a</td><td>b</td></tr></table>
<ul><li>one</li></ul><a href="https://example.com/page">link</a> <a href="#top">top</a> <a href="mailto:a@example.com">mail</a>
<details><summary>more</summary><p>hidden <b>bold</b> <code>x</code></p></details></body></html>`
	doc := SanitizePage(in, "Static")
	inert(t, "static", doc)
	for _, want := range []string{
		`h1{color:#c00;font:bold 2em/1 serif}`, `linear-gradient(90deg,rgb(0 0 0/.5),transparent)`,
		`url("data:image/png;base64,iVBORw0KGgo=")`, `@media (max-width:600px)`, `calc(1em + 2px)`,
		`url("data:font/woff2;base64,d09GMgABAAAAAA==") format("woff2")`,
		`style="color: #333; background-color: rgba(255,0,0,.2); transform: rotate(2deg); border:1px solid #ccc"`,
		`<img src="data:image/png;base64,iVBOR`, `alt="dot"`,
		`viewBox="0 0 100 100"`, `<linearGradient id="g">`, `stop-color="red"`, `fill="url(#g)"`, `<path d="M10 10 L90 90" style="stroke:green">`,
		`<text x="10" y="20" font-size="12">SVG text</text>`, `<use href="#g">`,
		`<th colspan="2">h</th>`, `<li>one</li>`, `href="https://example.com/page"`, `href="#top"`, `href="mailto:a@example.com"`,
		`rel="nofollow noreferrer noopener"`, `<details><summary>more</summary>`, `<h1 class="t" id="top">Title</h1>`,
		`<meta name="robots" content="noindex`,
	} {
		if !strings.Contains(doc, want) {
			t.Fatalf("static markup lost %q:\n%s", want, doc)
		}
	}
}

func TestCSSUnescape(t *testing.T) {
	for in, want := range map[string]string{`u\72l`: "url", `\75 rl`: "url", `\"`: `"`, `a\\b`: `a\b`, `plain`: "plain"} {
		if got := cssUnescape(in); got != want {
			t.Fatalf("cssUnescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRemoteImageBecomesAltText(t *testing.T) {
	doc := SanitizePage(`<p>See <img src="https://cdn.example/chart.png" alt="the chart"> here</p>`, "t")
	if strings.Contains(doc, "<img") || !strings.Contains(doc, "<p>See the chart here</p>") {
		t.Fatalf("remote image:\n%s", doc)
	}
}
