// Package holidays computes French public holidays for every zone of the calendar API
// (calendrier.api.gouv.fr) from the rules of Etalab's jours-feries-france library, the
// source of that API: fixed dates with the year each was instituted, Easter-based dates,
// Alsace-Moselle's two extra days and each overseas department's abolition-of-slavery day.
package holidays

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/compute/fold"
)

// Zones are the slugs of the calendar API.
var Zones = []string{
	"metropole", "alsace-moselle", "guadeloupe", "guyane", "la-reunion", "martinique", "mayotte",
	"nouvelle-caledonie", "polynesie-francaise", "saint-barthelemy", "saint-martin",
	"saint-pierre-et-miquelon", "wallis-et-futuna",
}

// FirstYear is the first year the rules cover: the library has no Easter before 1886.
const FirstYear = 1886

// ErrZone is returned for a zone that is not in Zones.
var ErrZone = errors.New("unknown zone")

// Day is one public holiday.
type Day struct {
	Date string `json:"date"` // YYYY-MM-DD
	Nom  string `json:"nom"`
}

// Slug maps a zone as people write it ("La Réunion", "Alsace Moselle") to its slug.
func Slug(zone string) (string, error) {
	var b strings.Builder
	for _, r := range fold.String(strings.TrimSpace(zone)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '_' || r == '\'':
			b.WriteByte('-')
		}
	}
	s := b.String()
	switch s {
	case "reunion":
		s = "la-reunion"
	case "alsace", "moselle":
		s = "alsace-moselle"
	}
	if !slices.Contains(Zones, s) {
		return "", ErrZone
	}
	return s, nil
}

// Easter is Easter Sunday of the Gregorian calendar (Meeus/Jones/Butcher algorithm).
func Easter(y int) time.Time {
	a := y % 19
	b, c := y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 0, 0, 0, 0, time.UTC)
}

type rule struct {
	nom  string
	date func(y int) (time.Time, bool)
}

func fixed(m time.Month, d int, valid func(y int) bool) func(int) (time.Time, bool) {
	return func(y int) (time.Time, bool) {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), valid(y)
	}
}

func easter(offset int) func(int) (time.Time, bool) {
	return func(y int) (time.Time, bool) {
		return Easter(y).AddDate(0, 0, offset), y >= FirstYear
	}
}

func since(first int) func(int) bool { return func(y int) bool { return y >= first } }

// common holds the days of every zone, in the library's insertion order (fixed dates, then
// Easter-based ones). The order matters when two fall on one date: see For.
var common = []rule{
	{"1er janvier", fixed(time.January, 1, func(y int) bool { return y > 1810 })},
	{"1er mai", fixed(time.May, 1, func(y int) bool { return y > 1919 })},
	{"8 mai", fixed(time.May, 8, func(y int) bool { return (y >= 1953 && y <= 1959) || y > 1981 })},
	{"14 juillet", fixed(time.July, 14, since(1880))},
	{"Assomption", fixed(time.August, 15, since(1802))},
	{"Toussaint", fixed(time.November, 1, since(1802))},
	{"11 novembre", fixed(time.November, 11, since(1918))},
	{"Jour de Noël", fixed(time.December, 25, since(1802))},
	{"Lundi de Pâques", easter(1)},
	{"Ascension", easter(39)},
	{"Lundi de Pentecôte", easter(50)},
}

const abolition = "Abolition de l'esclavage"

var extra = map[string][]rule{
	"alsace-moselle": {
		{"Vendredi saint", easter(-2)},
		{"2ème jour de Noël", fixed(time.December, 26, since(FirstYear))},
	},
	"guadeloupe":       {{abolition, fixed(time.May, 27, since(1983))}},
	"guyane":           {{abolition, fixed(time.June, 10, since(1983))}},
	"la-reunion":       {{abolition, fixed(time.December, 20, since(1981))}},
	"martinique":       {{abolition, fixed(time.May, 22, since(1983))}},
	"mayotte":          {{abolition, fixed(time.April, 27, since(1983))}},
	"saint-barthelemy": {{abolition, fixed(time.October, 9, since(1983))}},
	"saint-martin": {
		{abolition, fixed(time.May, 27, func(y int) bool { return y >= 1983 && y <= 2017 })},
		{abolition, fixed(time.May, 28, since(2018))},
	},
}

// For lists the public holidays of year in zone (a slug), by date. When two holidays fall
// on the same date (Ascension on 1 May in 2008) there is one entry, named after the later
// rule, exactly as the calendar API answers.
func For(year int, zone string) ([]Day, error) {
	if !slices.Contains(Zones, zone) {
		return nil, ErrZone
	}
	byDate := map[string]string{}
	for _, r := range append(slices.Clone(common), extra[zone]...) {
		if d, ok := r.date(year); ok {
			byDate[d.Format(time.DateOnly)] = r.nom
		}
	}
	days := make([]Day, 0, len(byDate))
	for date, nom := range byDate {
		days = append(days, Day{Date: date, Nom: nom})
	}
	slices.SortFunc(days, func(a, b Day) int { return strings.Compare(a.Date, b.Date) })
	return days, nil
}
