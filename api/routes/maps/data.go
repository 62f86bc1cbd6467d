package maps

import (
	"encoding/json"
	"net/url"
	"strings"
)

// The maps pages carry their own data: the script that sets window.APP_INITIALIZATION_STATE
// stays in the rendered document, and its fourth element holds strings that are JSON
// answers behind the XSSI guard ")]}'": on a search page, the search answer (at [3][2]:
// [0][1] lists the results, each result's [14] a place); on a place page, the place's own
// answer (at [3][6]: its [6] is the place). A place is one positional array whose indices
// are stable across both answers (the ones the public scraper gosom/google-maps-scraper
// reads, checked on its recordings): 2 address lines, 4.7 rating, 4.8 review count,
// 7.0 website, 9.2/9.3 latitude/longitude, 10 feature id, 11 name, 13 categories,
// 18 "name, address", 27 place URL, 78 place id, 178 phones.

const stateMarker = "APP_INITIALIZATION_STATE="

// xssiGuard prefixes each embedded JSON answer.
const xssiGuard = ")]}'"

// appState decodes the page's window.APP_INITIALIZATION_STATE, nil when the page has none.
func appState(html string) []any {
	for rest := html; ; {
		i := strings.Index(rest, stateMarker)
		if i < 0 {
			return nil
		}
		rest = rest[i+len(stateMarker):]
		var v []any
		if json.NewDecoder(strings.NewReader(rest)).Decode(&v) == nil {
			return v
		}
	}
}

// embedded decodes the guarded JSON answer at state[3][i], nil when there is none.
func embedded(state []any, i int) []any {
	s, _ := at(state, 3, i).(string)
	body, ok := strings.CutPrefix(s, xssiGuard)
	if !ok {
		return nil
	}
	var v []any
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &v) != nil {
		return nil
	}
	return v
}

// searchData returns the places of the search answer a search page embeds, in its order.
func searchData(state []any) []Place {
	// The search answer sits at [3][2]; any other guarded answer of the right shape counts.
	for _, i := range answerOrder(state, 2) {
		rows, _ := at(embedded(state, i), 0, 1).([]any)
		var out []Place
		for _, row := range rows {
			if b, ok := at(row, 14).([]any); ok {
				if p, ok := fromData(b); ok {
					out = append(out, p)
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// placeData returns the place a place page embeds.
func placeData(state []any) (Place, bool) {
	for _, i := range answerOrder(state, 6) {
		if b, ok := at(embedded(state, i), 6).([]any); ok {
			if p, ok := fromData(b); ok {
				return p, true
			}
		}
	}
	return Place{}, false
}

// answerOrder lists the indices of state[3], the usual one first.
func answerOrder(state []any, usual int) []int {
	n := len(list(at(state, 3)))
	order := []int{usual}
	for i := range n {
		if i != usual {
			order = append(order, i)
		}
	}
	return order
}

// fromData reads one place array; false when it names no place.
func fromData(b []any) (Place, bool) {
	name := str(b, 11)
	if name == "" {
		return Place{}, false
	}
	p := Place{Name: name, Categories: strs(at(b, 13)), dataID: str(b, 10), PlaceID: str(b, 78), link: str(b, 27)}
	if len(p.Categories) > 0 {
		p.Category = p.Categories[0]
	}
	p.Address = strings.Join(strs(at(b, 2)), ", ")
	if p.Address == "" {
		p.Address = strings.TrimPrefix(str(b, 18), name+", ")
	}
	if r, ok := at(b, 4, 7).(float64); ok && r > 0 {
		p.Rating = &r
	}
	if n, ok := at(b, 4, 8).(float64); ok && n >= 0 {
		c := int64(n)
		p.reviews = &c
	}
	if lat, ok := at(b, 9, 2).(float64); ok {
		if lon, ok := at(b, 9, 3).(float64); ok {
			p.Latitude, p.Longitude = &lat, &lon
		}
	}
	if w := websiteOf(str(b, 7, 0)); w != "" {
		p.website = &w
	}
	if ph := phoneOf(at(b, 178, 0)); ph != "" {
		p.phone = &ph
	}
	return p, true
}

// phoneOf prefers the international form (kind 2 in the list of forms), else the first.
func phoneOf(v any) string {
	for _, f := range list(at(v, 1)) {
		if kind, _ := at(f, 1).(float64); kind == 2 {
			if s, _ := at(f, 0).(string); s != "" {
				return s
			}
		}
	}
	s, _ := at(v, 0).(string)
	return strings.TrimSpace(s)
}

// websiteOf unwraps a Google redirect (/url?q=…) to the site itself.
func websiteOf(s string) string {
	if s == "" {
		return ""
	}
	if u, err := url.Parse(s); err == nil && u.Path == "/url" {
		if q := u.Query().Get("q"); q != "" {
			return q
		}
		if q := u.Query().Get("url"); q != "" {
			return q
		}
	}
	return s
}

// at walks a decoded JSON value by list indices; nil when a step is missing.
func at(v any, idx ...int) any {
	for _, i := range idx {
		l, ok := v.([]any)
		if !ok || i < 0 || i >= len(l) {
			return nil
		}
		v = l[i]
	}
	return v
}

func list(v any) []any { l, _ := v.([]any); return l }

func str(v any, idx ...int) string { s, _ := at(v, idx...).(string); return strings.TrimSpace(s) }

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return out
}
