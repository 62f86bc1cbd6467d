package social_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/social"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/hackernews"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/reddit"
	"github.com/peage/appliance/api/upstream/upstreamtest"
	"github.com/peage/appliance/internal/obs"
)

var quiet = obs.Discard()

func redditFile(name string) string {
	return filepath.Join("..", "..", "upstream", "reddit", "testdata", name)
}
func hnFile(name string) string {
	return filepath.Join("..", "..", "upstream", "hackernews", "testdata", name)
}

type env struct {
	reddit, hn *upstreamtest.Server
	h          *apitest.Harness
	gate       *apitest.RecordingGate
}

// start serves the family with both sources on fixture servers, Reddit keyless, or with
// OAuth when key is "id:secret" (the token endpoint is the same fixture server).
func start(t *testing.T, key string) *env {
	t.Helper()
	g := &apitest.RecordingGate{}
	e := startGate(t, key, g)
	e.gate = g
	return e
}

// startGate is start behind gate (the tests of bad input use the challenge-only gate).
func startGate(t *testing.T, key string, gate paywall.Gate) *env {
	t.Helper()
	e := &env{reddit: upstreamtest.New(t), hn: upstreamtest.New(t)}
	rs, as, hs := e.reddit.Spec(t, reddit.Name), e.reddit.Spec(t, reddit.AuthName), e.hn.Spec(t, hackernews.Name)
	rs.Key = key
	pool := httpc.NewPool(map[string]upstream.Spec{reddit.Name: rs, reddit.AuthName: as, hackernews.Name: hs},
		httpc.Options{Contact: "test@example.org", Logger: quiet})
	rh, _ := pool.Client(reddit.Name)
	ah, _ := pool.Client(reddit.AuthName)
	hh, _ := pool.Client(hackernews.Name)
	rc, err := reddit.New(rh, ah, rs, "test@example.org")
	if err != nil {
		t.Fatal(err)
	}
	e.h = apitest.StartFamily(t, catalog.DefaultNames(), social.With(rc, hackernews.New(hh)), apitest.Options{Gate: gate})
	return e
}

func (e *env) get(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	resp, err := e.h.Client.Get(e.h.BaseURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %s", path, b)
	}
	return resp.StatusCode, m
}

var q = upstreamtest.Query

func redditSearch(t *testing.T) http.Handler {
	return upstreamtest.File(t, redditFile("search_praw_oauth.json"))
}

func TestSearchBothSources(t *testing.T) {
	e := start(t, "")
	e.reddit.Expect("/search.json", q("q", "praw oauth search", "sort", "relevance", "t", "all", "limit", "5", "type", "link", "raw_json", "1"), redditSearch(t))
	e.hn.Expect("/api/v1/search", q("query", "praw oauth search", "tags", "story", "hitsPerPage", "5"), upstreamtest.File(t, hnFile("search_ssh_link.json")))
	status, m := e.get(t, "/v1/social/search?q=praw+oauth+search&limit=5")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	if got := m["sources_answered"].([]any); len(got) != 2 {
		t.Errorf("sources_answered %v", got)
	}
	posts := m["posts"].([]any)
	if m["count"] != 5.0 || len(posts) != 5 {
		t.Fatalf("count %v posts %d", m["count"], len(posts))
	}
	// Relevance interleaves the sources' own rankings: hn first (sorted codes), then reddit.
	hn, rd := posts[0].(map[string]any), posts[1].(map[string]any)
	// The recorded hit is a link story: its story_text is "", so its excerpt is empty.
	if hn["id"] != "hn:8828543" || hn["author"] != "dkua" || hn["permalink"] != "https://news.ycombinator.com/item?id=8828543" ||
		hn["score"] != 270.0 || hn["num_comments"] != 103.0 || hn["url"] != "https://medium.com/@shazow/ssh-how-does-it-even-9e43586e4ffc" ||
		hn["created_at"] != "2015-01-02T21:05:46.000Z" || hn["excerpt"] != "" {
		t.Errorf("hn post %v", hn)
	}
	if rd["id"] != "reddit:3gpbiu" || rd["author"] != "dClauzel" || rd["num_comments"] != 21.0 ||
		rd["permalink"] != "https://www.reddit.com/r/redditdev/comments/3gpbiu/prawoauth2util_problem_using_get_banned_raise/?ref=search_posts" {
		t.Errorf("reddit post %v", rd)
	}
	if c, w := e.gate.Counts(); c != 1 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

func TestSearchOneSourceDown(t *testing.T) {
	e := start(t, "")
	e.reddit.Handle(upstreamtest.TooMany())
	e.hn.Expect("/api/v1/search_by_date", q("query", "biologist", "tags", "story", "hitsPerPage", "25"), upstreamtest.File(t, hnFile("search_ssh_link.json")))
	status, m := e.get(t, "/v1/social/search?q=biologist&sort=new")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	if got := m["sources_answered"].([]any); len(got) != 1 || got[0] != "hn" {
		t.Errorf("sources_answered %v", got)
	}
	failed := m["sources_failed"].([]any)
	if len(failed) != 1 || failed[0].(map[string]any)["source"] != "reddit" || failed[0].(map[string]any)["status"] != "failed" ||
		failed[0].(map[string]any)["error"] == nil {
		t.Errorf("sources_failed %v", failed)
	}
}

func TestSearchAllDown(t *testing.T) {
	e := start(t, "")
	e.reddit.Handle(upstreamtest.ServerError())
	e.hn.Handle(upstreamtest.ServerError())
	status, m := e.get(t, "/v1/social/search?q=x402&sources=reddit,hn")
	if status != 502 {
		t.Fatalf("status %d %v", status, m)
	}
	if c, w := e.gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

// TestBadInput runs behind the challenge-only gate: bad input is a 400 before any 402, good
// input the 402 challenge.
func TestBadInput(t *testing.T) {
	e := startGate(t, "", paywall.ChallengeOnly{})
	for _, path := range []string{"/v1/social/thread?id=hn:8863", "/v1/social/thread?id=reddit:3hahrw", "/v1/social/thread?id=reddit:t3_3hahrw", "/v1/social/search?q=x402&sources=hn"} {
		if status, m := e.get(t, path); status != 402 {
			t.Errorf("%s: status %d %v, want the 402 challenge", path, status, m)
		}
	}
	for _, path := range []string{
		"/v1/social/search?q=",
		"/v1/social/search?q=x402&limit=0",
		"/v1/social/search?q=x402&limit=101",
		"/v1/social/search?q=x402&sources=twitter",
		"/v1/social/search?q=x402&sort=hot",
		"/v1/social/thread?id=8863",
		"/v1/social/thread?id=hn:abc",
		"/v1/social/thread?id=twitter:123",
		"/v1/social/thread?id=hn:8863&limit=201",
		"/v1/social/thread?id=reddit:3HAHRW",
		"/v1/social/thread?id=hn:8863:1",
	} {
		status, m := e.get(t, path)
		if status != 400 {
			t.Errorf("%s: status %d %v", path, status, m)
		}
	}
	if n := len(e.reddit.Requests()) + len(e.hn.Requests()); n != 0 {
		t.Errorf("%d upstream requests for bad input", n)
	}
}

func TestRedditThreadExpandsMore(t *testing.T) {
	e := start(t, "")
	e.reddit.Expect("/comments/3hahrw.json", q("limit", "20", "sort", "top", "raw_json", "1"), upstreamtest.File(t, redditFile("thread_3hahrw_limit10.json")))
	e.reddit.Expect("/api/morechildren.json", q("api_type", "json", "link_id", "t3_3hahrw", "children", "cu638nc,cu5tlz5,cu5tzj5", "sort", "top", "raw_json", "1"),
		upstreamtest.File(t, redditFile("morechildren_cu638nc.json")))
	status, m := e.get(t, "/v1/social/thread?id=reddit:3hahrw&limit=20")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	post := m["post"].(map[string]any)
	if post["title"] != "Ba Dum Tsss" || post["source"] != "reddit" || post["id"] != "reddit:3hahrw" || post["score"].(float64) < 10000 {
		t.Errorf("post %v", post)
	}
	comments := m["comments"].([]any)
	if m["comment_count"] != 20.0 || len(comments) != 20 || m["more_expanded"] != 1.0 || m["truncated"] != true {
		t.Fatalf("count %v comments %d expanded %v truncated %v", m["comment_count"], len(comments), m["more_expanded"], m["truncated"])
	}
	// The recorded tree: cu5tgzu at depth 2 has a "more" stub whose first child cu638nc is at
	// depth 3, followed in document order by its own replies at depths 4, 5, ...
	var depths []int
	for i, c := range comments {
		cm := c.(map[string]any)
		depths = append(depths, int(cm["depth"].(float64)))
		if cm["author"] == "" || cm["body"] == "" || cm["score"] == nil {
			t.Errorf("comment %d: %v", i, cm)
		}
		if i > 0 && depths[i] > depths[i-1]+1 {
			t.Errorf("comment %d jumps from depth %d to %d", i, depths[i-1], depths[i])
		}
	}
	if depths[0] != 0 {
		t.Errorf("first comment at depth %d", depths[0])
	}
	// The stub stood under cu5tgzu (cu5pebp > cu5sye5 > cu5tgzu): what it expands to comes
	// right after, one of the three ids it named first, at depth 3.
	ids := []any{}
	for _, c := range comments[:4] {
		ids = append(ids, c.(map[string]any)["id"])
	}
	if ids[0] != "reddit:cu5pebp" || ids[1] != "reddit:cu5sye5" || ids[2] != "reddit:cu5tgzu" ||
		(ids[3] != "reddit:cu638nc" && ids[3] != "reddit:cu5tlz5" && ids[3] != "reddit:cu5tzj5") || depths[3] != 3 {
		t.Errorf("expansion not in place: ids %v depths %v", ids, depths)
	}
}

func TestRedditOAuth(t *testing.T) {
	e := start(t, "client:secret")
	e.reddit.Expect("/api/v1/access_token", nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "client" || p != "secret" || r.Method != http.MethodPost {
			t.Errorf("token request %s with %q:%q", r.Method, u, p)
		}
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
			t.Errorf("token form %v", r.PostForm)
		}
		upstreamtest.File(t, redditFile("token.json")).ServeHTTP(w, r)
	}))
	e.reddit.Expect("/search", q("q", "praw oauth search", "sort", "top", "t", "all", "limit", "3", "type", "link", "raw_json", "1"),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "bearer <ACCESS_TOKEN>" {
				t.Errorf("authorization %q", r.Header.Get("Authorization"))
			}
			redditSearch(t).ServeHTTP(w, r)
		}))
	status, m := e.get(t, "/v1/social/search?q=praw+oauth+search&sources=reddit&sort=top&limit=3")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	posts := m["posts"].([]any)
	if len(posts) != 3 {
		t.Fatalf("posts %v", posts)
	}
	for i := 1; i < len(posts); i++ {
		if posts[i].(map[string]any)["score"].(float64) > posts[i-1].(map[string]any)["score"].(float64) {
			t.Errorf("top is not sorted by score: %v", posts)
		}
	}
}

func TestStatusProbesAndCaches(t *testing.T) {
	e := start(t, "")
	e.reddit.Expect("/search.json", q("q", "news", "sort", "new", "t", "day", "limit", "1", "type", "link", "raw_json", "1"), redditSearch(t))
	e.hn.Handle(upstreamtest.ServerError())
	for range 2 {
		status, m := e.get(t, "/free/social/status")
		if status != 200 {
			t.Fatalf("status %d %v", status, m)
		}
		src := m["sources"].([]any)
		rd, hn := src[0].(map[string]any), src[1].(map[string]any)
		if rd["ok"] != true || rd["mode"] != "keyless" || hn["ok"] != false || hn["error"] == "" {
			t.Errorf("status %v", src)
		}
	}
	if n := len(e.reddit.Requests()); n != 1 {
		t.Errorf("reddit probed %d times within a minute", n)
	}
}

// TestHNThreadFlattensNestedItems serves Algolia's recorded /items answer (a real thread
// trimmed to its first two top-level comments and all their replies, see
// api/upstream/hackernews/testdata/PROVENANCE): the tree is flattened in document order with
// each comment's depth, HN's HTML turned to text, and limit cuts it with truncated set.
func TestHNThreadFlattensNestedItems(t *testing.T) {
	e := start(t, "")
	e.hn.Expect("/api/v1/items/22665398", nil, upstreamtest.File(t, hnFile("item_22665398.json")))
	status, m := e.get(t, "/v1/social/thread?id=hn:22665398")
	if status != 200 {
		t.Fatalf("status %d %v", status, m)
	}
	post := m["post"].(map[string]any)
	if post["id"] != "hn:22665398" || post["title"] != "Ask HN: Who is hiring right now?" || post["author"] != "whoishiring" ||
		post["score"] != 1083.0 || post["num_comments"] != 12.0 || post["created_at"] != "2020-03-23T16:13:49.000Z" ||
		post["permalink"] != "https://news.ycombinator.com/item?id=22665398" {
		t.Errorf("post %v", post)
	}
	if text, _ := post["text"].(string); !strings.HasPrefix(text, "We thought it might be helpful to do this sooner than usual.") ||
		!strings.Contains(text, "There's a corresponding thread") || strings.Contains(text, "<p>") {
		t.Errorf("post text %q", text)
	}
	want := []struct {
		id     string
		author string
		depth  float64
	}{
		{"hn:22665510", "chimichangga", 0}, {"hn:22665526", "dang", 1},
		{"hn:22665560", "coldpie", 0}, {"hn:22665579", "dang", 1}, {"hn:22665607", "coldpie", 2},
		{"hn:22665789", "fxtentacle", 1}, {"hn:22666153", "coldpie", 2}, {"hn:22666323", "awnfuron", 3},
		{"hn:22666385", "dang", 4}, {"hn:22666472", "awnfuron", 5},
		{"hn:22671642", "djmips", 1}, {"hn:22671928", "BoysenberryPi", 2},
	}
	comments := m["comments"].([]any)
	if m["comment_count"] != 12.0 || len(comments) != len(want) || m["truncated"] == true {
		t.Fatalf("comment_count %v, %d comments, truncated %v", m["comment_count"], len(comments), m["truncated"])
	}
	for i, w := range want {
		c := comments[i].(map[string]any)
		if c["id"] != w.id || c["author"] != w.author || c["depth"] != w.depth {
			t.Errorf("comment %d = %v %v %v, want %v", i, c["id"], c["author"], c["depth"], w)
		}
	}
	if c := comments[9].(map[string]any); c["body"] != "Fair enough. Thank you." || c["created_at"] != "2020-03-23T17:37:16.000Z" {
		t.Errorf("deepest comment %v", c)
	}
	if body := comments[1].(map[string]any)["body"]; body != "You have to personally be part of the hiring company to post here. Please see the rules at the top. If Zoom, Domino's, or Dollar General want to do that, they are welcome." {
		t.Errorf("entities not decoded: %q", body)
	}

	status, m = e.get(t, "/v1/social/thread?id=hn:22665398&limit=5")
	if status != 200 {
		t.Fatalf("limit 5: status %d %v", status, m)
	}
	if m["comment_count"] != 5.0 || m["truncated"] != true || m["post"].(map[string]any)["num_comments"] != 12.0 {
		t.Errorf("limit 5: count %v truncated %v", m["comment_count"], m["truncated"])
	}
	if c, w := e.gate.Counts(); c != 2 || w != 0 {
		t.Errorf("charged %d waived %d", c, w)
	}
}

func TestHNThreadMissingAndDown(t *testing.T) {
	e := start(t, "")
	e.hn.Handle(upstreamtest.ServerError())
	if status, m := e.get(t, "/v1/social/thread?id=hn:22665398"); status != 502 {
		t.Errorf("down: status %d %v", status, m)
	}
	if c, w := e.gate.Counts(); c != 0 || w != 1 {
		t.Errorf("charged %d waived %d", c, w)
	}
}
