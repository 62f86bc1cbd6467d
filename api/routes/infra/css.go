package infra

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gorilla/css/scanner"
)

// sanitizeCSS filters a style sheet or a style attribute's declarations so that nothing in it
// can make the browser fetch anything or run anything: url() and src() must point at a data:
// image or font, or at a fragment (#id, for SVG gradients and filters); @import, @charset and
// @namespace are removed; functions outside a list of pure ones (colours, gradients, maths,
// transforms, filters, pseudo-classes) are removed with their arguments; comments are dropped;
// "<" never survives, so the sheet cannot close its <style> element. The page's
// Content-Security-Policy forbids the same things again (default-src 'none').
func sanitizeCSS(in string) string {
	s := scanner.New(in)
	var out strings.Builder
	for {
		t := s.Next()
		switch t.Type {
		case scanner.TokenEOF, scanner.TokenError:
			return out.String()
		case scanner.TokenComment, scanner.TokenCDO, scanner.TokenCDC, scanner.TokenBOM:
			out.WriteByte(' ')
		case scanner.TokenAtKeyword:
			switch strings.ToLower(cssUnescape(t.Value[1:])) {
			case "import", "charset", "namespace":
				skipStatement(s)
			default:
				out.WriteString(t.Value)
			}
		case scanner.TokenURI:
			inner := strings.TrimSpace(t.Value[len("url(") : len(t.Value)-1])
			writeURL(&out, cssUnquote(inner))
		case scanner.TokenFunction:
			name := strings.ToLower(cssUnescape(strings.TrimSuffix(t.Value, "(")))
			switch {
			case name == "url" || name == "src":
				raw, ok := collectArgs(s)
				if !ok {
					return out.String()
				}
				writeURL(&out, cssUnquote(strings.TrimSpace(raw)))
			case pureFunctions[name]:
				out.WriteString(t.Value)
			default:
				if _, ok := collectArgs(s); !ok {
					return out.String()
				}
				out.WriteString("none")
			}
		case scanner.TokenChar:
			if t.Value == "<" {
				out.WriteString(`\3c `)
			} else {
				out.WriteString(t.Value)
			}
		case scanner.TokenString:
			out.WriteString(strings.ReplaceAll(t.Value, "<", `\3c `))
		default:
			out.WriteString(t.Value)
		}
	}
}

// pureFunctions compute values locally; none takes a URL.
var pureFunctions = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`rgb rgba hsl hsla hwb lab lch oklab oklch color color-mix light-dark
		calc min max clamp var env attr counter counters round mod rem abs sign sin cos tan asin acos atan atan2 pow sqrt hypot log exp
		linear-gradient radial-gradient conic-gradient repeating-linear-gradient repeating-radial-gradient repeating-conic-gradient
		-webkit-linear-gradient -webkit-radial-gradient -moz-linear-gradient -moz-radial-gradient
		translate translatex translatey translatez translate3d rotate rotatex rotatey rotatez rotate3d scale scalex scaley scalez scale3d
		skew skewx skewy matrix matrix3d perspective cubic-bezier steps linear
		blur brightness contrast drop-shadow grayscale hue-rotate invert opacity saturate sepia
		repeat minmax fit-content format local rect inset circle ellipse polygon xywh
		not is where has nth-child nth-last-child nth-of-type nth-last-of-type lang dir host host-context`) {
		pureFunctions[f] = true
	}
}

func writeURL(out *strings.Builder, u string) {
	if !allowedCSSURL(u) {
		out.WriteString("none")
		return
	}
	out.WriteString(`url("`)
	for _, r := range u {
		switch {
		case r == '"' || r == '\\' || r == '<' || r < 0x20 || r == 0x7f:
			out.WriteString(`\` + strconv.FormatInt(int64(r), 16) + " ")
		default:
			out.WriteRune(r)
		}
	}
	out.WriteString(`")`)
}

// allowedCSSURL admits inline images and fonts and same-document fragments only.
func allowedCSSURL(u string) bool {
	l := strings.ToLower(strings.TrimSpace(u))
	if strings.HasPrefix(l, "#") {
		return true
	}
	for _, p := range []string{"data:image/", "data:font/", "data:application/font", "data:application/x-font"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// collectArgs consumes tokens up to the ')' closing the current function and returns their text.
func collectArgs(s *scanner.Scanner) (string, bool) {
	var b strings.Builder
	depth := 0
	for {
		t := s.Next()
		switch t.Type {
		case scanner.TokenEOF, scanner.TokenError:
			return "", false
		case scanner.TokenFunction:
			depth++
		case scanner.TokenChar:
			switch t.Value {
			case "(":
				depth++
			case ")":
				if depth == 0 {
					return b.String(), true
				}
				depth--
			}
		case scanner.TokenComment:
			continue
		}
		b.WriteString(t.Value)
	}
}

// skipStatement consumes an at-rule up to its ';', or through its {} block.
func skipStatement(s *scanner.Scanner) {
	depth := 0
	for {
		t := s.Next()
		switch t.Type {
		case scanner.TokenEOF, scanner.TokenError:
			return
		case scanner.TokenChar:
			switch t.Value {
			case ";":
				if depth == 0 {
					return
				}
			case "{":
				depth++
			case "}":
				depth--
				if depth <= 0 {
					return
				}
			}
		}
	}
}

func cssUnquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	return cssUnescape(s)
}

// cssUnescape resolves CSS backslash escapes (\75 or \u).
func cssUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		for j < len(s) && j-i <= 6 && isHex(s[j]) {
			j++
		}
		if j > i+1 {
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			r := rune(n)
			if r == 0 || !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
			if j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n') {
				j++
			}
			i = j
			continue
		}
		if s[i+1] == '\n' {
			i += 2 // escaped newline: line continuation
			continue
		}
		_, w := utf8.DecodeRuneInString(s[i+1:])
		b.WriteString(s[i+1 : i+1+w])
		i += 1 + w
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
