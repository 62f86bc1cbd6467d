package web_test

import (
	"bytes"
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
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/farmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var (
	env *farmtest.Env
	cat *catalog.Catalog
)

func TestMain(m *testing.M) {
	flag.Parse()
	var err error
	env, err = farmtest.Start(2, 16)
	if err != nil {
		fmt.Fprintln(os.Stderr, "web route tests need a real Chromium:", err)
		os.Exit(1)
	}
	cat, err = catalog.Default(catalog.DefaultNames())
	if err == nil {
		err = web.New(env.Farm, env.Policy).Bind(cat)
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
	h := apitest.Start(t, cat, apitest.Options{Gate: gate})
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

// golden compares a JSON answer with testdata/<name>.golden.json after replacing the test
// site's random port and the timestamps.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: not JSON: %v", name, err)
	}
	pretty, _ := json.MarshalIndent(v, "", "  ")
	got := strings.ReplaceAll(string(pretty), env.Base, "http://site.test")
	got = volatile.ReplaceAllString(got, `"$1": "<volatile>"`) + "\n"
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
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
