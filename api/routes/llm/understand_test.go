package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/llm/llmtest"
)

// pages stands in for the browser farm: it serves fixed pages by URL, and for a challenge
// URL the error web.ReadPage gives for an anti-bot page (the farm's own behaviour is tested
// in api/routes/web).
type pages map[string]*family.Page

func (p pages) ReadPage(_ context.Context, url string, _ bool) (*family.Page, error) {
	if strings.Contains(url, "captcha") {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target", Message: "the page answered with an anti-bot challenge (cloudflare; title Just a moment...); it is reported, not bypassed, and nothing was charged"}
	}
	pg, ok := p[url]
	if !ok {
		return nil, apierr.NotFound("no page")
	}
	return pg, nil
}

func (p pages) ReadyToRead() error { return nil }

var shop = pages{"https://shop.example/item": {URL: "https://shop.example/item", FinalURL: "https://shop.example/item", Title: "Kettle",
	Markdown: "# Steel kettle\n\nPrice:   **29,90 €**\n\nIn stock: yes.\n\nThe kettle   boils 1.7 litres in three minutes.",
	Text:     "Steel kettle Price: 29,90 € In stock: yes. The kettle boils 1.7 litres in three minutes."}}

func TestUnderstandVerifiesEvidence(t *testing.T) {
	w := newWorld(t, true, shop, nil)
	w.srv.Push(
		llmtest.JSON(t, map[string]any{"answerable": true, "answer": "1.7 litres", "evidence": []string{"The kettle boils 1.7 litres"}}),
		llmtest.JSON(t, map[string]any{"answerable": true, "answer": "2 litres", "evidence": []string{"The kettle boils 2 litres"}}),
		llmtest.JSON(t, map[string]any{"answerable": false, "answer": "", "evidence": []string{}}),
	)
	ok := w.post(t, "/v1/understand", map[string]any{"source": "https://shop.example/item", "objective": "How much water does it hold?"})
	m := ok.json(t)
	ok.golden(t, "understand")
	ev := m["evidence"].([]any)
	if ok.status != 200 || m["answer"] != "1.7 litres" || m["verification"].(map[string]any)["passe"] != true || len(ev) != 1 {
		t.Fatalf("%d %s", ok.status, ok.body)
	}
	if e := ev[0].(map[string]any); e["extrait"] != "The kettle boils 1.7 litres" || e["position"].(float64) <= 0 {
		t.Errorf("evidence %v", e)
	}
	// The verification block as /v1/extract/verified gives it: a control per quote, echecs empty.
	v := m["verification"].(map[string]any)
	if c := apitest.At(v, "controles", 0); apitest.At(c, "controle") != "extrait_1_dans_source_1" || apitest.At(c, "ok") != true ||
		len(v["controles"].([]any)) != 1 || v["echecs"] == nil || len(v["echecs"].([]any)) != 0 {
		t.Errorf("verification %v", v)
	}
	// A quote not in the page: no answer, nothing charged.
	bad := w.post(t, "/v1/understand", map[string]any{"source": "https://shop.example/item", "objective": "How much water does it hold?"})
	if bad.status != 502 || !strings.Contains(string(bad.body), "verification failed") || strings.Contains(string(bad.body), "2 litres\"") {
		t.Errorf("unverified: %d %s", bad.status, bad.body)
	}
	none := w.post(t, "/v1/understand", map[string]any{"source": "https://shop.example/item", "objective": "Who designed it?"})
	if none.status != 404 {
		t.Errorf("unanswerable: %d %s", none.status, none.body)
	}
	// A captcha page is refused before the model is called.
	cap := w.post(t, "/v1/understand", map[string]any{"source": "https://captcha.example/", "objective": "anything"})
	if cap.status != 502 || len(w.srv.Bodies()) != 3 {
		t.Errorf("captcha: %d %s, %d model calls", cap.status, cap.body, len(w.srv.Bodies()))
	}
	if c, wv := w.gate.Counts(); c != 1 || wv != 3 {
		t.Errorf("charged %d waived %d", c, wv)
	}
}

func TestExtractStructuredExactFields(t *testing.T) {
	w := newWorld(t, true, shop, nil)
	w.srv.Push(llmtest.JSON(t, map[string]any{"fields": []any{
		map[string]any{"name": "price", "value": 29.9, "extrait": "Price: **29,90 €**", "reason_if_null": nil},
		map[string]any{"name": "rating", "value": 4.5, "extrait": "Rated 4.5 stars", "reason_if_null": nil}, // not on the page
		map[string]any{"name": "stock", "value": "yes", "extrait": "In stock: yes.", "reason_if_null": nil},
		map[string]any{"name": "colour", "value": "red", "extrait": "red", "reason_if_null": nil}, // not requested
	}}))
	a := w.call(t, "GET", "/v1/extract-structured?url=https://shop.example/item&fields=price,rating,stock,brand", nil)
	m := a.json(t)
	a.golden(t, "extract_structured")
	// The requested fields at the top level, unwrapped; where each comes from beside them.
	data, fields := m, apitest.At(m, "_extraction", "fields").(map[string]any)
	if a.status != 200 || len(data) != 5 || data["price"] != 29.9 || data["stock"] != "yes" || data["rating"] != nil || data["brand"] != nil ||
		apitest.At(m, "_extraction", "final_url") != "https://shop.example/item" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if _, extra := data["colour"]; extra {
		t.Errorf("an unrequested field came back")
	}
	if r := fields["rating"].(map[string]any)["reason"].(string); !strings.Contains(r, "not in the page") {
		t.Errorf("rating reason %q", r)
	}
	if r := fields["brand"].(map[string]any)["reason"].(string); r == "" {
		t.Errorf("brand has no reason")
	}
}
