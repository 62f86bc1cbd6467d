package article

import "unicode/utf8"

// Sources of a page's content.
const (
	SourceRendered = "rendered" // the DOM after the page's scripts ran
	SourceServer   = "server"   // the HTML document the server sent
)

// Sources are the two readings of one page a browser gives: the DOM after its scripts ran,
// and the document its server sent.
type Sources struct {
	Rendered Page
	// Server is the server's own HTML, decoded (browserfarm/extract/htmlcharset); "" when
	// there is none to read.
	Server string
	// RenderedMisdecoded says the browser decoded the document with another encoding than
	// the one its bytes are in: the rendered text is mojibake wherever it is not ASCII.
	RenderedMisdecoded bool
}

// scriptsKept is the least share of the server's content words the rendered content must
// hold to be taken as the same article with what scripts added. A page whose scripts
// replaced the article by an error or consent page keeps next to none of them; two
// extractions of one article differ by their edges, far above this.
const scriptsKept = 0.4

// ExtractBest extracts both readings of a page and keeps one, by what each holds: the
// rendered DOM (with the browser's layout signals, and what scripts added) unless the
// browser misread the document's encoding, or the page's scripts emptied or replaced the
// article its server sent; the server's HTML never wins when it holds no main content of its
// own (a page built by script). Content.Source says which one was used. The choice depends
// only on the two documents, so the same page gives the same markdown (web.changed's hash).
func ExtractBest(s Sources) (Content, error) {
	rendered, rerr := Extract(s.Rendered)
	rendered.Source = SourceRendered
	if s.Server == "" || s.Rendered.ContentType == "text/plain" {
		return rendered, rerr
	}
	server, serr := Extract(Page{HTML: s.Server, ContentType: "text/html", URL: s.Rendered.URL})
	server.Source = SourceServer
	if serr != nil || utf8.RuneCountInString(server.Text) < minContent {
		if rerr != nil && serr == nil && server.Text != "" {
			return server, nil
		}
		return rendered, rerr
	}
	switch {
	case rerr != nil || s.RenderedMisdecoded:
		return server, nil
	case coverage(rendered.Text, server.Text) < scriptsKept:
		return server, nil
	}
	return rendered, nil
}
