package browserfarm_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/testenv"
)

var env *farmtest.Env

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperFarmProcess())
	}
	flag.Parse()
	if testenv.MainNeeds(testenv.Browser) {
		os.Exit(m.Run())
	}
	var err error
	env, err = farmtest.Start(2, 16)
	if err != nil {
		fmt.Fprintln(os.Stderr, "browserfarm tests need a real Chromium:", err)
		os.Exit(1)
	}
	code := m.Run()
	env.Close()
	os.Exit(code)
}

func do(t *testing.T, task browserfarm.Task) (*browserfarm.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return env.Farm.Do(ctx, task)
}

func code(err error) farmerr.Kind { return farmerr.KindOf(err) }

// TestScriptContent: what scripts insert at parse time, after a timer and after fetches is
// read, even when a fetch answers later than the farm's quiet time (the farm waits for the
// page's own requests, not for a longer silence).
func TestScriptContent(t *testing.T) {
	cases := []struct {
		name, path string
		want       []string
	}{
		{"parse_timer_fetch", "/js", []string{"Rendered by JavaScript", "inserted by a script", "fetched by script after load"}},
		{"slow_fetches_in_a_row", "/js-slow", []string{"Waiting for the data", "Paragraph one fetched slowly.", "Paragraph two fetched slowly."}},
		// No script element: the farm reads a page with nothing that runs at once, so what
		// an event handler attribute or a frame's script adds must not pass for nothing.
		{"handler_attribute", "/js-handler", []string{"Before the handler.", "Inserted by an onload attribute."}},
		{"frame_script", "/js-frame", []string{"Before the frame.", "Inserted by the frame's script."}},
		{"image_error_handler", "/js-onerror", []string{"Inserted by an image's onerror attribute."}},
		{"module_script_beside_json_ld", "/js-module", []string{"Inserted by a module script."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := do(t, browserfarm.Task{URL: env.URL(c.path)})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(res.Text, want) {
					t.Errorf("text lacks %q:\n%s", want, res.Text)
				}
			}
			if res.Status != 200 || res.ContentType != "text/html" || !res.LoadComplete {
				t.Errorf("status %d type %q load %v", res.Status, res.ContentType, res.LoadComplete)
			}
		})
	}
}

// TestLayout: the layout signals are read only when the job asks for them, and then name the
// fixed cookie bar and the hidden menu by their index in document order.
func TestLayout(t *testing.T) {
	res, err := do(t, browserfarm.Task{URL: env.URL("/overlay")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Layout != nil {
		t.Errorf("layout read without Task.Layout: %+v", res.Layout)
	}
	res, err = do(t, browserfarm.Task{URL: env.URL("/overlay"), Layout: true})
	if err != nil {
		t.Fatal(err)
	}
	want := browserfarm.Layout{Elements: 10, Hidden: []int{8}, Pinned: []int{6}}
	if res.Layout == nil || !reflect.DeepEqual(*res.Layout, want) {
		t.Errorf("layout %+v, want %+v", res.Layout, want)
	}
}

func TestRedirects(t *testing.T) {
	cases := []struct {
		name, path string
		hops       []int
	}{
		{"http_301_then_302", "/redirect", []int{301, 302}},
		{"script_location_replace", "/js-redirect", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := do(t, browserfarm.Task{URL: env.URL(c.path)})
			if err != nil {
				t.Fatal(err)
			}
			if res.FinalURL != env.URL("/article") || !strings.Contains(res.Text, "caves du Jura") {
				t.Errorf("final url %s, text %.80q", res.FinalURL, res.Text)
			}
			var hops []int
			for _, r := range res.Redirects {
				hops = append(hops, r.Status)
			}
			if fmt.Sprint(hops) != fmt.Sprint(c.hops) {
				t.Errorf("redirect statuses %v, want %v", hops, c.hops)
			}
		})
	}
}

// TestFingerprint: pages see a plain desktop Chrome in French on Paris time, not an
// automated headless browser.
func TestFingerprint(t *testing.T) {
	res, err := do(t, browserfarm.Task{URL: env.URL("/fingerprint")})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"header-lang=fr-FR", "webdriver=false", "tz=Europe/Paris", "lang=fr-FR", "Chrome/"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("fingerprint lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "Headless") {
		t.Errorf("the browser shows itself as headless:\n%s", res.Text)
	}
}
