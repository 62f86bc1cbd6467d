package article_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm/extract/article"
	"github.com/peage/appliance/internal/goldenfile"
)

// The pages under testdata/pages were written for these tests (see testdata/PROVENANCE):
// each has the chrome of a real site of its kind around its content, so a case can fail
// both ways: content missing, or boilerplate kept.
var cases = []struct {
	page      string
	required  []string // in the markdown, as written
	forbidden []string
}{
	{"news-en", []string{"# Dredging of the north basin starts in March", "About 180,000 cubic metres", "## Traffic during the works", "until the end of May"},
		[]string{"Read also", "Why the hybrid ferries were late", "Most read", "Subscribe", "Legal notice", "Accept all cookies", "Share on Mastodon", "Sign in"}},
	{"news-fr", []string{"quarante-deux commerçants", "La charpente métallique de 1898", "rue des Tanneurs"},
		[]string{"À lire aussi", "Les halles de la ville", "Abonnez-vous", "Privacy policy", "Most read"}},
	{"news-es", []string{"hasta la medianoche", "doce marineros", "tasa turística"},
		[]string{"Lea también", "piden un puente", "Telegram", "Legal notice"}},
	{"news-de", []string{"drei Meter breite Asphaltspur", "Schwellen eingebaut"},
		[]string{"Lesen Sie auch", "Mehr zum Thema", "Fahrradstraßen in der Innenstadt", "Legal notice"}},
	// Ruby annotations (the readings printed over the words) are not text: kept, they split
	// every annotated word in two.
	{"news-ja", []string{"# 港の北の岸壁がまた使えるようになる", "二年間の工事が終わって、月曜日からまた使えるようになります。", "浮き桟橋も早く開けてほしい"},
		[]string{"みなと</", "(にねんかん)", "にねんかん", "Most read", "Legal notice"}},
	// Captions and credit lines describe pictures the markdown does not carry.
	{"news-photos", []string{"# The lighthouse gets its lens back", "six cracked ones were cast again", "first Saturday of April", "temporary beacon on a mast"},
		[]string{"lifted into the lantern room on Tuesday morning", "Harbour Press Agency", "Prisms drying on racks", "M. Ortega", "Most read", "Legal notice"}},
	// Boxes that templates put inside the post's own container: disclosure, rating, embedded
	// post, subscription box, author box, and the blog's sidebar widgets.
	{"blog-boxes", []string{"between 4.5 and 5 metres", "a skeg is enough", "buy the paddle with the boat"},
		[]string{"affiliate links", "Rate this post", "87 votes", "Spray decks", "Never miss a trip report", "Join 3,000 paddlers", "Anna Berg", "About this blog", "Categories", "Legal notice"}},
	{"news-jsonld", []string{"every Friday and Saturday from June", "four-berth compartments", "between 39 and 89 pounds"},
		[]string{"Five stations worth the detour", "Timetable changes in May", "Most read"}},
	{"blog-personal", []string{"south-facing balcony", "Second, water in the morning", "'Sungold' gave fruit"},
		[]string{"my beefsteaks were a disaster", "grafted plants", "Leave a reply", "Post comment", "Most read"}},
	{"blog-code", []string{"```", "d, err := time.ParseDuration(\"1h30m\")", "`1h30m`", "## Printing them back"},
		[]string{"Most read", "Legal notice"}},
	{"docs-guide", []string{"# Installing the agent", "## Steps", "1. Download the package", "sudo systemctl enable --now agent.service", "readable by other users", "## Checking that it runs"},
		[]string{"Configuration reference", "Edit this page", "Previous: Introduction", "Legal notice"}},
	{"docs-api", []string{"| limit | integer | 20 |", "| Name | Type | Default | Description |", "## Query parameters", "\"FR-0042\""},
		[]string{"Legal notice", "Sign in"}},
	{"forum-thread", []string{"Every morning my combi boiler shows 0.5 bar", "tyre gauge on its Schrader valve", "pressure has held at 1.2 bar"},
		[]string{"Reply to this topic", "Forum rules", "Legal notice", "Most read"}},
	{"qa-page", []string{"How can I undo the commit without losing my edits?", "git reset --soft HEAD~1", "`git commit --amend`"},
		[]string{"Hot network questions", "afraid of cucumbers", "Legal notice"}},
	{"product-page", []string{"Thrown by hand in our Devon workshop", "ash glaze is fired at 1,280 °C", "| Capacity | 1.2 litres |"},
		[]string{"Customers also viewed", "Tea caddy in oak", "Legal notice", "Most read"}},
	{"table-page", []string{"| Year | Passengers | Change |", "| 2024 | 1,402,250 | +7% |", "new evening crossing"},
		[]string{"Legal notice", "Most read", "Accept all cookies"}},
	{"script-inserted", []string{"supply boat every Thursday", "rationed tinned peaches", "open on weekend afternoons"},
		[]string{"fetch(", "Legal notice", "Most read"}},
	{"recipe", []string{"## Ingredients", "- 250 g buckwheat flour", "- 600 ml water", "2. Cover and leave in the fridge overnight."},
		[]string{"Legal notice", "Most read"}},
	{"wiki", []string{"metre-gauge tramway", "number 4 survives", "## Rolling stock"},
		[]string{"Jump to navigation", "Retrieved from the wiki", "Categories:", "Legal notice"}},
	{"changelog", []string{"## Fixed", "- The importer no longer skips the last row", "`--legacy-csv`"},
		[]string{"Legal notice", "Sign in"}},
	{"press-release", []string{"2,300 homes", "1.8 km embankment", "No family should have to move out every winter"},
		[]string{"Legal notice", "Most read"}},
	{"event", []string{"thirty choirs from eight countries", "- Sunday 16: the big sing-along", "Bring a folding chair"},
		[]string{"Legal notice", "Most read"}},
	{"job-posting", []string{"four deckhands", "- Moor and unmoor the ferries", "## What we ask", "jobs@ferries.example"},
		[]string{"Legal notice", "Most read"}},
	{"longform", []string{"> A machine-made net is fine until it tears.", "## A dying trade", "one stayed"},
		[]string{"Legal notice", "Most read"}},
	{"about-short", []string{"run by three volunteers since 2019"},
		[]string{"Legal notice", "Accept all cookies", "Ferry timetable changes"}},
	{"shop-listing", []string{"# Nos fromages", "Comté 18 mois", "19,50 €/kg"},
		[]string{"cookies", "Panier", "© Boutique"}},
	{"news-it", []string{"quattrocento metri di palancole", "fino a 9.000 tonnellate", "due pontili galleggianti"},
		[]string{"Leggi anche", "Il mercato del pesce cambia orario", "Most read", "Legal notice"}},
	{"forum-quotes", []string{"come out flat and dense", "> The kitchen is about 16 °C at night.", "bulk ferment needs roughly twice as long", "doubled in five hours"},
		[]string{"Reply to this topic", "Forum rules", "Most read", "Legal notice"}},
	{"docs-cli", []string{"# ferryctl sync", "ferryctl sync [--dry-run] [--operator NAME] [--since DATE]", "Lists the files that would change", "| 3 | A checksum did not match; nothing was replaced |"},
		[]string{"Configuration reference", "Edit this page", "Previous: Installation", "Legal notice"}},
	{"product-jsonld", []string{"# Walnut chopping board", "English walnut felled in a Herefordshire orchard", "- Thickness: 4 cm"},
		[]string{"Customers also viewed", "Cherry serving spoon", "Add to basket", "Legal notice"}},
	{"table-timetable", []string{"| Day | First | Last | Boats |", "| Sunday and holidays | 08:45 | 18:15 | 4 |", "booked at least one day ahead"},
		[]string{"Legal notice", "Most read", "Accept all cookies"}},
	{"script-shell", []string{"leave the capital at 22:50", "six refurbished couchette cars", "first ski weekends"},
		[]string{"enable JavaScript", "__STATE__", "Legal notice", "Most read"}},
	{"blog-comments", []string{"# Repairing a cane chair seat", "fifteen metres of medium cane", "tightened over two days"},
		[]string{"Great tutorial", "Where did you buy the cane", "Leave a reply", "Most read", "Legal notice"}},
}

// collapse makes table cells comparable whatever padding the converter chose.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pages", name+".html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPages(t *testing.T) {
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			got, err := article.Extract(article.Page{HTML: read(t, c.page), ContentType: "text/html",
				URL: "https://example.org/" + c.page})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.required {
				if !strings.Contains(collapse(got.Markdown), collapse(s)) {
					t.Errorf("missing %q (method %s)", s, got.Method)
				}
			}
			for _, s := range c.forbidden {
				if strings.Contains(got.Markdown, s) {
					t.Errorf("kept boilerplate %q (method %s)", s, got.Method)
				}
			}
			golden(t, c.page, got)
		})
	}
}

func golden(t *testing.T, name string, c article.Content) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".md")
	got := "<!-- " + c.Method + " | " + c.Title + " -->\n" + c.Markdown + "\n"
	if goldenfile.Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
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
		t.Errorf("%s differs (run go test -update after checking):\n%s", path, got)
	}
}
