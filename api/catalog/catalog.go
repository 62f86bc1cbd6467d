package catalog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/peage/appliance/api/apierr"
)

// Catalog is the validated, indexed table. Handlers are bound to entries by ID at composition.
type Catalog struct {
	entries []*Entry
	byID    map[string]*Entry
	exact   map[string]*Entry // path → entry
	pattern []*Entry          // entries whose path has a {id} segment
	formats formatSet         // this catalog's validators: the standard ones as families refined them
}

// New validates the table and indexes it. Errors name the offending entry.
func New(entries []Entry) (*Catalog, error) {
	c := &Catalog{byID: map[string]*Entry{}, exact: map[string]*Entry{}, formats: formats.clone()}
	for i := range entries {
		e := &entries[i]
		if e.ID == "" {
			e.ID = IDOf(e.Path)
		}
		if err := validate(e); err != nil {
			return nil, fmt.Errorf("catalog entry %s: %w", e.ID, err)
		}
		if _, dup := c.byID[e.ID]; dup {
			return nil, fmt.Errorf("catalog entry %s: duplicate id", e.ID)
		}
		if e.Tier == "" {
			e.Tier = TierOf(e.Price)
		}
		e.formats = c.formats
		c.byID[e.ID] = e
		if strings.Contains(e.Path, "{id}") {
			c.pattern = append(c.pattern, e)
		} else {
			if _, dup := c.exact[e.Path]; dup {
				return nil, fmt.Errorf("catalog entry %s: duplicate path %s", e.ID, e.Path)
			}
			c.exact[e.Path] = e
		}
		c.entries = append(c.entries, e)
	}
	for _, e := range c.entries {
		for _, alt := range []string{e.Partial, e.FreeTrial} {
			if alt != "" && c.exact[alt] == nil {
				return nil, fmt.Errorf("catalog entry %s: alternative %s is not in the catalog", e.ID, alt)
			}
		}
	}
	return c, nil
}

// IDOf derives an entry ID from its path: "/v1/fr/kyb/partial" → "fr.kyb.partial",
// "/hook/{id}/events" → "hook.events", "/.well-known/x402" → "well-known.x402", "/" → "index".
func IDOf(path string) string {
	p := strings.TrimPrefix(path, "/v1/")
	p = strings.ReplaceAll(p, "{id}", "")
	var parts []string
	for _, seg := range strings.Split(p, "/") {
		if seg = strings.TrimPrefix(seg, "."); seg != "" {
			parts = append(parts, seg)
		}
	}
	if len(parts) == 0 {
		return "index"
	}
	return strings.Join(parts, ".")
}

var exitCountry = regexp.MustCompile(`^[A-Za-z]{2}$`)

func validate(e *Entry) error {
	if e.Method != "GET" && e.Method != "POST" {
		return fmt.Errorf("method %q", e.Method)
	}
	if !strings.HasPrefix(e.Path, "/") {
		return fmt.Errorf("path %q must start with /", e.Path)
	}
	if e.Summary == "" || len(e.Summary) > 200 {
		return fmt.Errorf("summary must be 1 to 200 characters")
	}
	if e.Kind == Paid && e.Price == 0 {
		return fmt.Errorf("paid route without a price")
	}
	if e.Kind != Paid && e.Price != 0 {
		return fmt.Errorf("unpaid route with a price")
	}
	if e.Timeout <= 0 {
		return fmt.Errorf("timeout must be set")
	}
	seen := map[string]bool{}
	for _, p := range e.Params {
		if seen[p.Name] {
			return fmt.Errorf("duplicate param %s", p.Name)
		}
		seen[p.Name] = true
		if p.Format != "" {
			if _, ok := formats[p.Format]; !ok {
				return fmt.Errorf("param %s: unknown format %s", p.Name, p.Format)
			}
		}
	}
	if e.ExitCountry != "" && e.ExitParam != "" {
		return fmt.Errorf("an exit country both fixed and asked for")
	}
	if e.ExitCountry != "" && !exitCountry.MatchString(e.ExitCountry) {
		return fmt.Errorf("exit country %q: two letters", e.ExitCountry)
	}
	if e.ExitParam != "" && !slices.ContainsFunc(e.Params, func(p Param) bool { return p.Name == e.ExitParam && p.Type == String }) {
		return fmt.Errorf("exit country parameter %s: no such string parameter", e.ExitParam)
	}
	if e.Example != nil {
		if _, err := e.Decode(e.Example); err != nil {
			return fmt.Errorf("example does not validate: %w", err)
		}
	}
	return nil
}

// Entries lists the table in declaration order.
func (c *Catalog) Entries() []*Entry { return c.entries }

// Entry returns the entry with id, or nil.
func (c *Catalog) Entry(id string) *Entry { return c.byID[id] }

// ByPath returns the entry serving the exact path, or nil.
func (c *Catalog) ByPath(path string) *Entry { return c.exact[path] }

// Bind attaches a handler (and an optional readiness check) to an entry.
func (c *Catalog) Bind(id string, h Handler, ready func() error) error {
	e := c.byID[id]
	if e == nil {
		return fmt.Errorf("catalog: bind %s: no such entry", id)
	}
	// Two families binding one entry is a composition mistake: the later would silently win.
	if e.Handler != nil {
		return fmt.Errorf("catalog: bind %s: already bound", id)
	}
	e.Handler, e.Ready = h, ready
	return nil
}

// Override replaces the handler of an entry a family has bound, on purpose: a fleet gateway
// sends the calls of the routes its own families serve to its boxes (api/relay). An entry
// not bound yet is Bind's; overriding one is an error, so a missing family is never hidden.
func (c *Catalog) Override(id string, h Handler, ready func() error) error {
	e := c.byID[id]
	if e == nil || e.Handler == nil {
		return fmt.Errorf("catalog: override %s: not bound", id)
	}
	e.Handler, e.Ready = h, ready
	return nil
}

// Unbound lists the IDs of the entries no family has bound, in table order.
func (c *Catalog) Unbound() []string {
	var ids []string
	for _, e := range c.entries {
		if e.Handler == nil {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// BindCheck attaches a family's check across an entry's decoded parameters (Entry.Check).
func (c *Catalog) BindCheck(id string, check func(Args) error) error {
	e := c.byID[id]
	if e == nil {
		return fmt.Errorf("catalog: bind check %s: no such entry", id)
	}
	e.Check = check
	return nil
}

// Lookup finds the entry for method and path. Every /v1 route accepts GET and POST; other
// methods answer 405. Resource routes (/hook/{id}) accept whatever methods they declare.
// It returns the {id} segment for pattern routes.
func (c *Catalog) Lookup(method, path string) (*Entry, string, error) {
	e, id := c.exact[path], ""
	if e == nil {
		e, id = c.matchPattern(path)
	}
	if e == nil {
		return nil, "", apierr.NotFound("no route %s; the catalog is at / and /openapi.json", path)
	}
	if !e.allows(method) {
		return nil, "", &apierr.Error{Code: apierr.CodeMethod, Message: fmt.Sprintf("%s does not accept %s; use %s", path, method, strings.Join(e.Methods(), " or "))}
	}
	return e, id, nil
}

func (c *Catalog) matchPattern(path string) (*Entry, string) {
	for _, e := range c.pattern {
		pre, post, _ := strings.Cut(e.Path, "{id}")
		if !strings.HasPrefix(path, pre) || !strings.HasSuffix(path, post) || len(path) <= len(pre)+len(post) {
			continue
		}
		id := path[len(pre) : len(path)-len(post)]
		if !strings.Contains(id, "/") {
			return e, id
		}
	}
	return nil, ""
}

// Methods lists the methods the entry accepts.
func (e *Entry) Methods() []string {
	switch {
	case e.AnyMethod:
		return []string{"any"}
	case strings.HasPrefix(e.Path, "/v1/") || e.Kind == Free:
		return []string{"GET", "POST"}
	case e.DescribedByGET:
		return []string{e.Method, "GET", "HEAD"}
	default:
		return []string{e.Method, "HEAD"}
	}
}

func (e *Entry) allows(method string) bool {
	if e.AnyMethod {
		return true
	}
	if method == "OPTIONS" {
		return true
	}
	return slices.Contains(e.Methods(), method)
}
