package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/testenv"
)

var (
	env *farmtest.Env
	cat *catalog.Catalog
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testenv.MainNeeds(testenv.Browser) {
		os.Exit(m.Run())
	}
	var err error
	// Every call here comes from one client, whose cap (half the pool) would read a call's pages
	// one at a time, in an order that decides which of them meets its deadline; the caps have
	// their own tests (fair_test.go).
	env, err = farmtest.StartTuned(2, 16, func(cfg *browserfarm.Config) { cfg.PayerBrowsers, cfg.ClientBrowsers = 2, 2 })
	if err != nil {
		fmt.Fprintln(os.Stderr, "web route tests need a real Chromium:", err)
		os.Exit(1)
	}
	cat, err = catalog.Default(catalog.DefaultNames())
	if err == nil {
		w := web.With(env.Farm, env.Policy)
		// What proxyd's exit check reads from a French residential line.
		w.ExitCountry = func(context.Context) (string, error) { return "FR", nil }
		err = w.Bind(cat)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		env.Close()
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("status %d, body is not JSON: %v\n%s", a.status, err, a.body)
	}
	return m
}

func (a answer) errCode(t *testing.T) string {
	t.Helper()
	e, _ := a.json(t)["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (a answer) errMessage(t *testing.T) string {
	t.Helper()
	e, _ := a.json(t)["error"].(map[string]any)
	c, _ := e["message"].(string)
	return c
}

// call posts params to path on a real server whose gate lets calls through unpaid and
// records whether each would have been charged.
func call(t *testing.T, path string, params map[string]any) (answer, *apitest.RecordingGate) {
	t.Helper()
	gate := &apitest.RecordingGate{}
	h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate})
	body, _ := json.Marshal(params)
	resp, err := h.Client.Post(h.BaseURL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}, gate
}

// volatile fields change from run to run: timestamps, and checksums of content that holds
// the test site's random port (TestContentHash checks the checksums themselves).
var volatile = regexp.MustCompile(`"(checked_at|retrieved_at|content_sha256)":\s*"[^"]*"`)

// declaredBox is the width and height attributes of each test-site image, by path.
var declaredBox = map[string][2]float64{
	"/img/cave.jpg":    {640, 480},
	"/img/dot.png":     {320, 240},
	"/img/missing.png": {200, 100},
}

// altTextBoxes checks, then takes out of the golden, the displayed size of every image that
// did not load: Chromium then lays out its alt text inline, ignoring the declared size, so the
// box is as wide as the text in whatever fonts the machine has (143×18 on one, 176×19 on
// another). What holds everywhere is that the box exists and fits the declared one. A loaded
// image keeps its exact numbers: they come from its attributes and the file.
func altTextBoxes(t *testing.T, v any) {
	t.Helper()
	m, _ := v.(map[string]any)
	images, _ := m["images"].([]any)
	for _, x := range images {
		im, _ := x.(map[string]any)
		if im == nil || im["width"] != float64(0) || im["height"] != float64(0) {
			continue
		}
		src, _ := im["src"].(string)
		box, ok := declaredBox[strings.TrimPrefix(src, env.Base)]
		if !ok {
			t.Errorf("image %s: no declared box in declaredBox", src)
			continue
		}
		w, _ := im["display_width"].(float64)
		h, _ := im["display_height"].(float64)
		if w <= 0 || h <= 0 || w > box[0] || h > box[1] {
			t.Errorf("image %s: alt text shown in %gx%g, want a non-empty box within the declared %gx%g", src, w, h, box[0], box[1])
		}
		t.Logf("image %s: alt text shown in %gx%g", src, w, h)
		im["display_width"], im["display_height"] = "alt text: depends on fonts", "alt text: depends on fonts"
	}
}

// golden compares a JSON answer with testdata/<name>.golden.json after replacing the test
// site's random port, the timestamps and the sizes the machine's fonts decide.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: not JSON: %v", name, err)
	}
	altTextBoxes(t, v)
	pretty, _ := json.MarshalIndent(v, "", "  ")
	got := strings.ReplaceAll(string(pretty), env.Base, "http://site.test")
	got = volatile.ReplaceAllString(got, `"$1": "<volatile>"`) + "\n"
	path := filepath.Join("testdata", name+".golden.json")
	if goldenfile.Update() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run go test -update after checking):\n%s", name, path, got)
	}
}

// TestGolden runs every JSON route on the page made for it and compares the whole answer.
func TestGolden(t *testing.T) {
	cases := []struct {
		name, path, page string
		params           map[string]any
	}{
		{"extract_article", "/v1/extract", "/article", nil},
		{"extract_js", "/v1/extract", "/js", nil},
		{"extract_verified_article", "/v1/extract/verified", "/article", nil},
		{"extract_verified_short", "/v1/extract/verified", "/short", nil},
		{"free_extract_article", "/free/extract", "/article", nil},
		{"links_article", "/v1/links", "/article", nil},
		{"meta_article", "/v1/meta", "/article", nil},
		{"tables", "/v1/web/tables", "/tables", nil},
		{"jsonld_article", "/v1/web/jsonld", "/article", nil},
		{"contacts", "/v1/web/contacts", "/contacts", nil},
		{"prices", "/v1/web/prices", "/prices", nil},
		{"headings_article", "/v1/web/headings", "/article", nil},
		{"forms", "/v1/web/forms", "/forms", nil},
		{"images_article", "/v1/web/images", "/article", nil},
		{"images", "/v1/web/images", "/images", nil},
		{"navigation_article", "/v1/web/navigation", "/article", nil},
		{"changed_baseline", "/v1/web/changed", "/counter?v=1", nil},
		{"unblock_text", "/v1/unblock", "/article", map[string]any{"format": "text"}},
		{"unblock_plain_fetch", "/v1/unblock", "/short", map[string]any{"format": "markdown", "render": false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			params := map[string]any{"url": env.URL(c.page)}
			for k, v := range c.params {
				params[k] = v
			}
			a, gate := call(t, c.path, params)
			if a.status != 200 {
				t.Fatalf("status %d: %s", a.status, a.body)
			}
			if charged, _ := gate.Counts(); strings.HasPrefix(c.path, "/v1/") && charged != 1 {
				t.Errorf("a successful call must be charged once, got %d", charged)
			}
			golden(t, c.name, a.body)
		})
	}
}

// TestContentHash: the evidence checksum is the SHA-256 of the returned markdown, normalised.
func TestContentHash(t *testing.T) {
	a, _ := call(t, "/v1/extract/verified", map[string]any{"url": env.URL("/article")})
	m := a.json(t)
	md, _ := m["markdown"].(string)
	ev, _ := m["evidence"].(map[string]any)
	want, chars := extract.Hash(md)
	if ev["content_sha256"] != want || ev["chars"] != float64(chars) {
		t.Errorf("evidence %v does not match the markdown (sha %s, %d chars)", ev, want, chars)
	}
}
