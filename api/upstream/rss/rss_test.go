package rss

import (
	"context"
	"testing"
	"time"

	"github.com/peage/appliance/api/upstream/upstreamtest"
)

func TestFetchRecordedFeeds(t *testing.T) {
	for _, c := range []struct {
		feed                      Feed
		file                      string
		n                         int
		title, link, author, cat0 string
		published                 time.Time
		summaryPrefix             string
	}{
		{Newsrooms[0], "coindesk.xml", 3, "Circle and Tether step in to freeze hacker wallet after massive Bitget crypto heist",
			"https://www.coindesk.com/markets/2026/09/25/circle-and-tether-step-in-to-freeze-hacker-wallet-after-massive-bitget-crypto-heist",
			"Oliver Knight", "", time.Date(2026, 9, 25, 14, 41, 53, 0, time.UTC), "The stablecoin issuer blacklisted"},
		{Newsrooms[1], "cointelegraph.xml", 3, "Brazil’s Petrobras uses Cardano to track sustainable aviation fuel, renewable diesel",
			"https://cointelegraph.com/news/brazils-petrobras-uses-cardano-to-track-sustainable-aviation-fuel-renewable-diesel",
			"Nate Kostar", "Latest News", time.Date(2026, 9, 30, 17, 17, 54, 0, time.UTC), "Petrobras developed two Cardano-based applications"},
		{Newsrooms[3], "theblock.xml", 20, "Multicoin Capital makes first Hyperliquid ecosystem investment in Trasia, an Asia-focused trading platform",
			"https://www.theblock.co/post/408670/multicoin-capital-hyperliquid-ecosystem-investment-trasia",
			"Yogita Khatri", "Companies", time.Date(2026, 7, 16, 16, 0, 2, 0, time.UTC), "Built on Hyperliquid, Trasia was co-founded by former Multicoin Capital partner Mable Jiang"},
	} {
		t.Run(c.feed.Source, func(t *testing.T) {
			s := upstreamtest.New(t)
			s.Expect(c.feed.Path, nil, upstreamtest.File(t, "testdata/"+c.file))
			items, err := Fetch(context.Background(), s.Client(t, c.feed.Name), c.feed)
			if err != nil || len(items) != c.n {
				t.Fatalf("Fetch = %d items, %v", len(items), err)
			}
			it := items[0]
			if it.Title != c.title || it.Link != c.link || !it.Published.Equal(c.published) || len(it.Authors) != 1 || it.Authors[0] != c.author {
				t.Errorf("item = %+v", it)
			}
			if c.cat0 != "" && (len(it.Categories) == 0 || it.Categories[0] != c.cat0) {
				t.Errorf("categories = %v", it.Categories)
			}
			if len(it.Summary) < len(c.summaryPrefix) || it.Summary[:len(c.summaryPrefix)] != c.summaryPrefix {
				t.Errorf("summary = %q (the description's HTML, image included, must be gone)", it.Summary)
			}
		})
	}
}

func TestParseRejectsHTML(t *testing.T) {
	if _, err := Parse([]byte("<html><body>Just a moment...</body></html>")); err == nil {
		t.Fatal("a challenge page parsed as a feed")
	}
}

func TestUntracked(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://cointelegraph.com/news/x?utm_source=rss_feed&utm_medium=rss&utm_campaign=rss_partner_inbound", "https://cointelegraph.com/news/x"},
		{"https://decrypt.co/a?id=7&utm_source=rss", "https://decrypt.co/a?id=7"},
		{"https://www.theblock.co/post/1", "https://www.theblock.co/post/1"},
	} {
		if got := untracked(c.in); got != c.want {
			t.Errorf("untracked(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
