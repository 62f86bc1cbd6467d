package holidays

import (
	"fmt"
	"testing"
	"time"
)

// gaussEaster is the algorithm of the Etalab library (a Gauss/Oudin-style computation),
// written independently of Easter's Meeus/Jones/Butcher form.
func gaussEaster(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d := (19*a + b - b/4 - ((b - (b+8)/25 + 1) / 3) + 15) % 30
	e := (32 + 2*(b%4) + 2*(c/4) - d - (c % 4)) % 7
	f := d + e - 7*((a+11*d+22*e)/451) + 114
	return time.Date(y, time.Month(f/31), f%31+1, 0, 0, 0, 0, time.UTC)
}

// oudinEaster is Oudin's 1940 algorithm, a third independent formulation.
func oudinEaster(y int) time.Time {
	g := y % 19
	c := y / 100
	h := (c - c/4 - (8*c+13)/25 + 19*g + 15) % 30
	i := h - (h/28)*(1-(h/28)*(29/(h+1))*((21-g)/11))
	j := (y + y/4 + i + 2 - c + c/4) % 7
	l := i - j
	m := 3 + (l+40)/44
	d := l + 28 - 31*(m/4)
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
}

func TestEaster1900To2100(t *testing.T) {
	for y := 1900; y <= 2100; y++ {
		got := Easter(y)
		if g := gaussEaster(y); !got.Equal(g) {
			t.Errorf("%d: Meeus %s, Gauss %s", y, got.Format(time.DateOnly), g.Format(time.DateOnly))
		}
		if o := oudinEaster(y); !got.Equal(o) {
			t.Errorf("%d: Meeus %s, Oudin %s", y, got.Format(time.DateOnly), o.Format(time.DateOnly))
		}
		if got.Weekday() != time.Sunday {
			t.Errorf("%d: Easter %s is not a Sunday", y, got.Format(time.DateOnly))
		}
	}
	for y, want := range map[int]string{1900: "1900-04-15", 1954: "1954-04-18", 2008: "2008-03-23", 2024: "2024-03-31", 2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28", 2038: "2038-04-25", 2100: "2100-03-28"} {
		if got := Easter(y).Format(time.DateOnly); got != want {
			t.Errorf("Easter(%d) = %s, want %s", y, got, want)
		}
	}
}

func TestMetropole2026MatchesTheAPI(t *testing.T) {
	// calendrier.api.gouv.fr/jours-feries/metropole/2026.json
	want := []Day{
		{"2026-01-01", "1er janvier"}, {"2026-04-06", "Lundi de Pâques"}, {"2026-05-01", "1er mai"},
		{"2026-05-08", "8 mai"}, {"2026-05-14", "Ascension"}, {"2026-05-25", "Lundi de Pentecôte"},
		{"2026-07-14", "14 juillet"}, {"2026-08-15", "Assomption"}, {"2026-11-01", "Toussaint"},
		{"2026-11-11", "11 novembre"}, {"2026-12-25", "Jour de Noël"},
	}
	got, err := For(2026, "metropole")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestEveryZoneAgainstTheRules recomputes each zone's list from the rules stated
// independently here, for every year from 1886 to 2200.
func TestEveryZoneAgainstTheRules(t *testing.T) {
	abolition := map[string]func(y int) string{
		"guadeloupe":       func(y int) string { return when(y >= 1983, y, "05-27") },
		"guyane":           func(y int) string { return when(y >= 1983, y, "06-10") },
		"la-reunion":       func(y int) string { return when(y >= 1981, y, "12-20") },
		"martinique":       func(y int) string { return when(y >= 1983, y, "05-22") },
		"mayotte":          func(y int) string { return when(y >= 1983, y, "04-27") },
		"saint-barthelemy": func(y int) string { return when(y >= 1983, y, "10-09") },
		"saint-martin": func(y int) string {
			if y >= 2018 {
				return when(true, y, "05-28")
			}
			return when(y >= 1983, y, "05-27")
		},
	}
	for _, zone := range Zones {
		for y := FirstYear; y <= 2200; y++ {
			days, err := For(y, zone)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for i, d := range days {
				got[d.Date] = d.Nom
				if i > 0 && days[i-1].Date >= d.Date {
					t.Fatalf("%s %d: not sorted by date", zone, y)
				}
			}
			p := gaussEaster(y)
			has := func(date time.Time, nom string, cond bool) {
				d := date.Format(time.DateOnly)
				if cond && got[d] == "" {
					t.Errorf("%s %d: missing %s on %s", zone, y, nom, d)
				}
				if !cond && got[d] == nom {
					t.Errorf("%s %d: %s on %s is not a holiday that year", zone, y, nom, d)
				}
			}
			on := func(m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
			has(p.AddDate(0, 0, 1), "Lundi de Pâques", true)
			has(p.AddDate(0, 0, 39), "Ascension", true)
			has(p.AddDate(0, 0, 50), "Lundi de Pentecôte", true)
			has(on(time.May, 1), "1er mai", y > 1919)
			has(on(time.May, 8), "8 mai", (y >= 1953 && y <= 1959) || y > 1981)
			has(on(time.November, 11), "11 novembre", y >= 1918)
			has(on(time.July, 14), "14 juillet", true)
			has(on(time.December, 25), "Jour de Noël", true)
			has(p.AddDate(0, 0, -2), "Vendredi saint", zone == "alsace-moselle")
			has(on(time.December, 26), "2ème jour de Noël", zone == "alsace-moselle")
			n := 0
			for _, d := range days {
				if d.Nom == "Abolition de l'esclavage" {
					n++
					if f := abolition[zone]; f == nil || f(y) != d.Date {
						t.Errorf("%s %d: abolition day on %s", zone, y, d.Date)
					}
				}
			}
			if f := abolition[zone]; f != nil && f(y) != "" && n != 1 {
				t.Errorf("%s %d: %d abolition days, want 1", zone, y, n)
			}
		}
	}
}

func when(ok bool, y int, md string) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d-%s", y, md)
}

func TestSameDateKeepsTheLaterRule(t *testing.T) {
	// In 2008 Ascension fell on 1 May; the API keeps one entry per date.
	days, _ := For(2008, "metropole")
	for _, d := range days {
		if d.Date == "2008-05-01" && d.Nom != "Ascension" {
			t.Errorf("2008-05-01 = %s, want Ascension", d.Nom)
		}
	}
	if len(days) != 10 {
		t.Errorf("2008 has %d entries, want 10", len(days))
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Alsace-Moselle": "alsace-moselle", "La Réunion": "la-reunion", "réunion": "la-reunion",
		"Polynésie française": "polynesie-francaise", "metropole": "metropole", "Métropole": "metropole",
		"Saint-Pierre-et-Miquelon": "saint-pierre-et-miquelon", "guadeloupe": "guadeloupe",
	} {
		if got, err := Slug(in); err != nil || got != want {
			t.Errorf("Slug(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Slug("atlantis"); err == nil {
		t.Error("unknown zone accepted")
	}
}
