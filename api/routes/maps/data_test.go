package maps

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
)

func ptr[T any](v T) *T { return &v }

// TestPlacePagesFromRecordings reads the place data of the recorded place page (entry1.html,
// whole) and of the recorded place answers embedded in it (raw.json, raw2.json); the
// expected values were read by hand in the recordings.
func TestPlacePagesFromRecordings(t *testing.T) {
	shell := fixture("entry1.html.gz")
	tests := []struct {
		name   string
		page   []byte
		want   Place
		phone  *string
		site   *string
		review int64
	}{
		{"entry1.html", shell, Place{Name: "Tipsy Sticks", Rating: ptr(4.7), Category: "Restaurant", Categories: []string{"Restaurant", "Bar"},
			Address: "Stasandrou 10, Nicosia 1060", PlaceID: "ChIJuVkmvYYX3hQR2536Jljm9rc", dataID: "0x14de1786bd2659b9:0xb7f6e65826fa9ddb",
			link: "https://www.google.com/maps/place/Tipsy+Sticks/data=!4m2!3m1!1s0x14de1786bd2659b9:0xb7f6e65826fa9ddb!10m1!1e1"},
			ptr("+357 22 783333"), ptr("https://www.thetipsysticks.com/"), 20},
		{"raw.json", withPlaceAnswer(shell, string(fixture("raw.json.gz"))), Place{Name: "Kipriakon", Rating: ptr(4.2), Category: "Restaurant",
			Categories: []string{"Restaurant"}, Address: "Old port, Limassol 3042", PlaceID: "ChIJDdnwdv0y5xQRRytw1ihZQeU",
			dataID: "0x14e732fd76f0d90d:0xe5415928d6702b47",
			link:   "https://www.google.com/maps/place/Kipriakon/data=!4m2!3m1!1s0x14e732fd76f0d90d:0xe5415928d6702b47!10m1!1e1"},
			ptr("+357 25 101555"), nil, 396},
		{"raw2.json", withPlaceAnswer(shell, string(fixture("raw2.json.gz"))), Place{Name: "Κυπριακόν", Rating: ptr(4.1), Category: "Εστιατόριο",
			Categories: []string{"Εστιατόριο"}, Address: "Old port, Λεμεσός 3042", PlaceID: "ChIJDdnwdv0y5xQRRytw1ihZQeU",
			dataID: "0x14e732fd76f0d90d:0xe5415928d6702b47"},
			ptr("+357 25 101555"), nil, 516},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := placeData(appState(string(tt.page)))
			if !ok {
				t.Fatal("no place data found")
			}
			if got.Name != tt.want.Name || *got.Rating != *tt.want.Rating || got.Category != tt.want.Category ||
				strings.Join(got.Categories, "|") != strings.Join(tt.want.Categories, "|") || got.Address != tt.want.Address ||
				got.PlaceID != tt.want.PlaceID || got.dataID != tt.want.dataID || got.link != tt.want.link {
				t.Errorf("place = %+v\nwant    %+v", got, tt.want)
			}
			if !same(got.phone, tt.phone) || !same(got.website, tt.site) || got.reviews == nil || *got.reviews != tt.review {
				t.Errorf("phone %v website %v reviews %v, want %v %v %d", deref(got.phone), deref(got.website), deref(got.reviews),
					deref(tt.phone), deref(tt.site), tt.review)
			}
			if got.Latitude == nil || got.Longitude == nil {
				t.Error("no coordinates")
			}
		})
	}
}

func same[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSearchAnswerFromRecording reads the recorded search answer (output.json) as a search
// page embeds it: 20 places in order, each with the fields the feed answers.
func TestSearchAnswerFromRecording(t *testing.T) {
	s := newSite()
	places := searchData(appState(string(s.searchPage(len(s.rows)))))
	if len(places) != embeddedRows {
		t.Fatalf("%d places, want the %d embedded", len(places), embeddedRows)
	}
	first, last := places[0], places[embeddedRows-1]
	if first.Name != "Dream Coffee" || *first.Rating != 4.8 || first.Category != "Coffee shop" || first.Address != "Eakou 74, Ilion 131 22, Greece" ||
		first.dataID != "0x14a1a32f316b15a1:0x169c54b46dcc3a93" || first.PlaceID != "ChIJoRVrMS-joRQRkzrMbbRUnBY" ||
		*first.phone != "+30 21 0261 6578" || *first.reviews != 48 || *first.website != "https://www.vrisko.gr/details/ag2e4fci67301a_44_3i4a4c_f341701" {
		t.Errorf("first = %+v", first)
	}
	if last.Name != "Goza X Coffee" || *last.Rating != 5 || last.Address != "Priamou 49, Ilion 131 22, Greece" {
		t.Errorf("tenth = %+v", last)
	}
	if got := searchData(appState(string(s.searchPage(0)))); len(got) != 0 {
		t.Errorf("a search without results gave %d places", len(got))
	}
}

// TestCardFromRecording reads the recorded result card (item.html) inside a feed.
func TestCardFromRecording(t *testing.T) {
	doc, err := extract.Parse(`<div role="feed">` + string(fixture("item.html")) + `</div>`)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := url.Parse("https://www.google.com/maps/search/photography+studio")
	cards := cardsOf(doc, page)
	if len(cards) != 1 {
		t.Fatalf("%d cards, want 1", len(cards))
	}
	c := cards[0]
	want := "https://www.google.com/maps/place/Touch+Photography/data=!4m7!3m6!1s0x80c32af5dab38457:0x7eb1082369d23dba!8m2!3d33.9874604!4d-117.8961057!16s%2Fg%2F1td6yczy!19sChIJV4Sz2vUqw4ARuj3SaSMIsX4?authuser=0&hl=en&rclk=1"
	if c.Name != "Touch Photography" || c.Rating == nil || *c.Rating != 4.3 || c.Category != "Photography studio" || c.Address != "18702 Colima Rd #106" ||
		c.MapURL != want || c.dataID != "0x80c32af5dab38457:0x7eb1082369d23dba" || c.PlaceID != "ChIJV4Sz2vUqw4ARuj3SaSMIsX4" ||
		*c.Latitude != 33.9874604 || *c.Longitude != -117.8961057 {
		b, _ := json.Marshal(c)
		t.Errorf("card = %s (id %s)", b, c.dataID)
	}
}

// TestBlockedPages: the recorded consent and unusual-traffic pages are named, whether the
// browser landed on Google's own hosts or on a page of another address; the maps' own pages
// are not walls.
func TestBlockedPages(t *testing.T) {
	s := newSite()
	tests := []struct {
		name, url string
		status    int
		html      []byte
		says      string
	}{
		{"consent host", "https://consent.google.com/ml?continue=x", 200, s.consent, "consent page (consent.google.com)"},
		{"consent form", "http://127.0.0.1:9/ml", 200, s.consent, "consent page (consent.google.com form)"},
		{"sorry path", "https://www.google.com/sorry/index?continue=x", 429, s.sorry, `"unusual traffic" page (www.google.com/sorry)`},
		{"sorry page", "http://127.0.0.1:9/elsewhere", 429, s.sorry, `"unusual traffic" page (google.com/sorry captcha)`},
		{"place page", "https://www.google.com/maps/place/x", 200, s.entry1, ""},
		{"search page", "https://www.google.com/maps/search/coffee", 200, s.searchPage(len(s.rows)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := extract.Parse(string(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			res := &browserfarm.Result{URL: tt.url, FinalURL: tt.url, Status: tt.status, HTML: string(tt.html), Text: doc.Text()}
			if got := Blocked(res); !strings.Contains(got, tt.says) || (tt.says == "") != (got == "") {
				t.Errorf("Blocked = %q, want %q", got, tt.says)
			}
		})
	}
}

// sizedFarm is a farm that tells its size and is never asked for a page.
type sizedFarm struct{ size int }

func (sizedFarm) Do(context.Context, browserfarm.Task) (*browserfarm.Result, error) {
	panic("not asked")
}
func (sizedFarm) Ready() error               { return nil }
func (f sizedFarm) Stats() browserfarm.Stats { return browserfarm.Stats{Size: f.size} }

// TestDetailsTakeHalfTheFarm: one call reads place pages on at most half the farm, and on 2
// at least.
func TestDetailsTakeHalfTheFarm(t *testing.T) {
	for size, want := range map[int]int{1: 2, 2: 2, 5: 2, 8: 4, 12: 6} {
		r, err := With(Parts{Farm: sizedFarm{size}})
		if err != nil || r.parallel != want {
			t.Errorf("farm of %d: %d at once (%v), want %d", size, r.parallel, err, want)
		}
	}
}
