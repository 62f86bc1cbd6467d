// Package htmlcharset decides the character encoding of an HTML document's bytes the way
// careful extractors do, and decodes them: the byte-order mark, then the HTTP header, then
// the document's own declaration (<meta charset> or http-equiv, anywhere in its head), then
// detection on the bytes. UTF-8 is preferred throughout: bytes that are valid UTF-8 and hold
// any non-ASCII text are UTF-8 whatever a header or declaration says, since legacy text is
// almost never valid UTF-8 by accident while stale declarations (a template's
// "iso-8859-1", a server's default header) are common. A browser instead decodes an
// undeclared page by its locale's default (Windows-1252) unless its first packet shows
// otherwise, which turns a UTF-8 page served as bare text/html into mojibake.
package htmlcharset

import (
	"bytes"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/gogs/chardet"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
)

// How an encoding was decided.
const (
	FromBOM         = "bom"
	FromHeader      = "header"
	FromDeclaration = "declaration"
	FromUTF8        = "valid-utf-8" // the bytes are UTF-8, over or without a declaration
	FromDetection   = "detection"
	FromDefault     = "default"
)

// Decision is an encoding and what decided it.
type Decision struct {
	Name string // WHATWG name, e.g. "utf-8", "windows-1252", "shift_jis"
	By   string // one of the From constants
	enc  encoding.Encoding
}

// declScan bounds the search for a declaration: a head longer than this is very rare, and
// a browser gives up much earlier.
const declScan = 64 << 10

// Decide chooses the encoding of body, an HTML document served with the Content-Type header
// contentType ("" when there was none).
func Decide(body []byte, contentType string) Decision {
	if e, name := bom(body); e != nil {
		return Decision{Name: name, By: FromBOM, enc: e}
	}
	utf8Text := isUTF8(body) && hasNonASCII(body)
	declared := func(label, by string) (Decision, bool) {
		e, name := charset.Lookup(label)
		if e == nil {
			return Decision{}, false
		}
		if name != "utf-8" && utf8Text {
			return Decision{Name: "utf-8", By: FromUTF8, enc: unicode.UTF8}, true
		}
		return Decision{Name: name, By: by, enc: e}, true
	}
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["charset"] != "" {
		if d, ok := declared(params["charset"], FromHeader); ok {
			return d
		}
	}
	if label := Declared(body); label != "" {
		if d, ok := declared(label, FromDeclaration); ok {
			return d
		}
	}
	if isUTF8(body) {
		return Decision{Name: "utf-8", By: FromUTF8, enc: unicode.UTF8}
	}
	if r, err := chardet.NewHtmlDetector().DetectBest(body); err == nil && r.Confidence >= 30 {
		if e, name := charset.Lookup(r.Charset); e != nil && name != "utf-8" {
			return Decision{Name: name, By: FromDetection, enc: e}
		}
	}
	e, name := charset.Lookup("windows-1252")
	return Decision{Name: name, By: FromDefault, enc: e}
}

// Decode is body as text under d, without its byte-order mark; undecodable bytes become
// U+FFFD.
func (d Decision) Decode(body []byte) string {
	if e, _ := bom(body); e != nil {
		body = body[len(bomOf(body)):]
	}
	if d.Name == "utf-8" {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	out, err := d.enc.NewDecoder().Bytes(body)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	return string(out)
}

// Name is the WHATWG name of the encoding label names, "" when it names none.
func Name(label string) string {
	_, name := charset.Lookup(label)
	return name
}

// Same reports whether two labels (a browser's document.characterSet, any WHATWG label)
// name one encoding; an unknown label is the same as none.
func Same(a, b string) bool {
	_, na := charset.Lookup(a)
	_, nb := charset.Lookup(b)
	return na == nb
}

// DecodeHTML decides the encoding of body and decodes it.
func DecodeHTML(body []byte, contentType string) (string, Decision) {
	d := Decide(body, contentType)
	return d.Decode(body), d
}

// Encode turns text back into the bytes it was decoded from under label; ok is false when
// label is unknown or text holds a character the encoding lacks (it was not decoded from it).
func Encode(text, label string) (b []byte, ok bool) {
	e, name := charset.Lookup(label)
	if e == nil {
		return nil, false
	}
	if name == "utf-8" {
		return []byte(text), true
	}
	// The encoders of the WHATWG index write what they lack as character references: only
	// a round trip tells that the text came from these bytes.
	b, err := e.NewEncoder().Bytes([]byte(text))
	if err != nil {
		return nil, false
	}
	back, err := e.NewDecoder().Bytes(b)
	return b, err == nil && string(back) == text
}

// Declared is the charset label the document declares in its head (<meta charset> or <meta
// http-equiv="Content-Type" content="…; charset=…">), "" when it declares none. The search
// ends with the head: the first element or text of the body.
func Declared(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body[:min(len(body), declScan)]))
	inRawText := false // the text of <title>, <script>, <style>… belongs to the head
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return ""
		case html.TextToken:
			if !inRawText && len(bytes.TrimSpace(z.Text())) > 0 {
				return "" // text of the body
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "meta":
				if label := metaCharset(z, hasAttr); label != "" {
					return label
				}
			case "title", "style", "script", "noscript", "template":
				inRawText = tt == html.StartTagToken
			case "html", "head", "link", "base":
			default:
				return "" // the body began
			}
		case html.EndTagToken:
			inRawText = false
		}
	}
}

func metaCharset(z *html.Tokenizer, hasAttr bool) string {
	var cs, httpEquiv, content string
	for hasAttr {
		var k, v []byte
		k, v, hasAttr = z.TagAttr()
		switch strings.ToLower(string(k)) {
		case "charset":
			cs = string(v)
		case "http-equiv":
			httpEquiv = strings.ToLower(string(v))
		case "content":
			content = string(v)
		}
	}
	if cs = strings.TrimSpace(cs); cs != "" {
		return cs
	}
	if httpEquiv == "content-type" {
		if _, params, err := mime.ParseMediaType(content); err == nil {
			return params["charset"]
		}
		if i := strings.Index(strings.ToLower(content), "charset="); i >= 0 {
			return strings.Trim(strings.TrimSpace(content[i+len("charset="):]), `"';`)
		}
	}
	return ""
}

var boms = []struct {
	bom  []byte
	name string
}{
	{[]byte{0xEF, 0xBB, 0xBF}, "utf-8"},
	{[]byte{0xFE, 0xFF}, "utf-16be"},
	{[]byte{0xFF, 0xFE}, "utf-16le"},
}

func bomOf(body []byte) []byte {
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) {
			return b.bom
		}
	}
	return nil
}

func bom(body []byte) (encoding.Encoding, string) {
	for _, b := range boms {
		if bytes.HasPrefix(body, b.bom) {
			e, name := charset.Lookup(b.name)
			return e, name
		}
	}
	return nil, ""
}

// isUTF8 is utf8.Valid, allowing a rune cut at the end (a body cut at a size limit).
func isUTF8(b []byte) bool {
	for i := len(b) - 1; i >= 0 && i > len(b)-4; i-- {
		if c := b[i]; c < 0x80 {
			break
		} else if utf8.RuneStart(c) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return utf8.Valid(b)
}

func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}
