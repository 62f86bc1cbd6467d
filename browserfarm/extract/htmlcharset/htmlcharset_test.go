package htmlcharset_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm/extract/htmlcharset"
)

func TestDecide(t *testing.T) {
	padding := strings.Repeat("<p>plain ASCII text that fills the first packet</p>\n", 100)
	cases := []struct {
		name        string
		body        []byte
		contentType string
		want, by    string
		text        string // in the decoded text
	}{
		{"utf8_bom_over_header", append([]byte{0xEF, 0xBB, 0xBF}, "<p>café</p>"...), "text/html; charset=iso-8859-1", "utf-8", htmlcharset.FromBOM, "<p>café</p>"},
		{"utf16le_bom", []byte{0xFF, 0xFE, '<', 0, 'p', 0, '>', 0, 0xE9, 0}, "text/html", "utf-16le", htmlcharset.FromBOM, "<p>é"},
		{"header", []byte("<p>caf\xe9</p>"), "text/html; charset=ISO-8859-1", "windows-1252", htmlcharset.FromHeader, "café"},
		{"header_over_declaration", []byte("<meta charset=\"utf-8\"><p>caf\xe9</p>"), "text/html; charset=windows-1252", "windows-1252", htmlcharset.FromHeader, "café"},
		{"declaration_meta_charset", []byte("<html><head><meta charset=\"windows-1250\"><title>t</title></head><body><p>Ci\xeaar</p>"), "text/html", "windows-1250", htmlcharset.FromDeclaration, "Cięar"},
		{"declaration_http_equiv_after_title_and_scripts", []byte("<html><head><title>T</title><script>var a = '<p>';</script>" +
			"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-2\"></head><body><p>\xb1</p>"), "", "iso-8859-2", htmlcharset.FromDeclaration, "ą"},
		{"declaration_after_the_first_kilobyte", []byte("<html><head><title>T</title><style>" + strings.Repeat("p{margin:0}\n", 200) + "</style><meta charset=\"koi8-r\"></head><body><p>\xf0\xd2\xc9</p>"), "", "koi8-r", htmlcharset.FromDeclaration, "При"},
		{"no_declaration_in_the_body", []byte(`<html><body><p>caf` + "\xc3\xa9" + `</p><meta charset="windows-1252">`), "", "utf-8", htmlcharset.FromUTF8, "café"},
		// The failure of issue 30: UTF-8 served as bare text/html, ASCII for its first packet.
		{"undeclared_utf8_late", []byte(padding + "<p>“Quoted” café</p>"), "text/html", "utf-8", htmlcharset.FromUTF8, "“Quoted” café"},
		{"stale_declaration_over_utf8", []byte(`<meta http-equiv="content-type" content="text/html; charset=iso-8859-1"><p>f` + "\xc3\xbc" + `r</p>`), "text/html", "utf-8", htmlcharset.FromUTF8, "für"},
		{"stale_header_over_utf8", []byte("<p>f\xc3\xbcr</p>"), "text/html; charset=iso-8859-1", "utf-8", htmlcharset.FromUTF8, "für"},
		{"ascii_under_legacy_declaration", []byte(`<meta charset="iso-8859-1"><p>f&uuml;r</p>`), "", "windows-1252", htmlcharset.FromDeclaration, "f&uuml;r"},
		{"undeclared_legacy_detected", []byte(padding + "<p>Le caf\xe9 de la gare a rouvert ses portes apr\xe8s des ann\xe9es de travaux, et les habitu\xe9s sont revenus d\xe8s le premier matin.</p>"), "text/html", "windows-1252", htmlcharset.FromDetection, "après des années"},
		{"utf8_cut_inside_a_rune", []byte("<p>caf\xc3\xa9 \xe2\x80"), "", "utf-8", htmlcharset.FromUTF8, "café"},
		{"unknown_header_label", []byte("<p>caf\xc3\xa9</p>"), "text/html; charset=x-unknown", "utf-8", htmlcharset.FromUTF8, "café"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, d := htmlcharset.DecodeHTML(c.body, c.contentType)
			if d.Name != c.want || d.By != c.by {
				t.Errorf("decided %s by %s, want %s by %s", d.Name, d.By, c.want, c.by)
			}
			if !strings.Contains(text, c.text) {
				t.Errorf("decoded text %q lacks %q", text[max(0, len(text)-80):], c.text)
			}
		})
	}
}

// TestRecordedPages: real pages of trafilatura's evaluation set (browserfarm/farmtest/recorded)
// served without a charset read right, and their snippets to leave out are still there to
// be left out (the decoding keeps the page whole).
func TestRecordedPages(t *testing.T) {
	cases := []struct {
		file, want, by string
		required       []string
	}{
		{"katholisch.at-alleinerziehende.html", "utf-8", htmlcharset.FromUTF8, []string{"anlässlich des internationalen", "kostengünstigen, niederschwelligen und"}},
		{"publimetro.cl-ministra.html", "utf-8", htmlcharset.FromUTF8, []string{"mayor celeridad posible”, añadió."}},
		{"landwirt.com.sensortechnik.html", "windows-1252", htmlcharset.FromDeclaration, []string{"b) Überwachung der somatischen Zellen", "Köllitsch (D)"}},
		{"rp.pl.unijne-fundusze.html", "windows-1250", htmlcharset.FromDeclaration, []string{"Ciężar dyskusji przeniesie", "Na lepszą konkurencyjność gospodarki"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "farmtest", "recorded", c.file))
			if err != nil {
				t.Fatal(err)
			}
			text, d := htmlcharset.DecodeHTML(b, "text/html")
			if d.Name != c.want || d.By != c.by {
				t.Errorf("decided %s by %s, want %s by %s", d.Name, d.By, c.want, c.by)
			}
			flat := strings.Join(strings.Fields(text), " ")
			for _, r := range c.required {
				if !strings.Contains(flat, r) {
					t.Errorf("lacks %q", r)
				}
			}
			if strings.Contains(text, "Ã") || strings.Contains(text, "\uFFFD") {
				t.Error("mojibake or undecodable bytes in the text")
			}
		})
	}
}

// TestEncodeRoundTrip: a body Chromium decoded under a legacy label becomes its bytes again.
func TestEncodeRoundTrip(t *testing.T) {
	raw := []byte("<p>\x93Q\x94 caf\xe9</p>")
	text, _ := htmlcharset.DecodeHTML(raw, "text/html; charset=windows-1252")
	back, ok := htmlcharset.Encode(text, "iso-8859-1")
	if !ok || string(back) != string(raw) {
		t.Errorf("round trip: %v %q", ok, back)
	}
	if _, ok := htmlcharset.Encode("日本", "windows-1252"); ok {
		t.Error("text the encoding lacks was encoded")
	}
}
