package catalog

import (
	_ "embed"
	"regexp"
	"strings"
)

// The answer shapes come from the service interface itself: its endpoint tables name, per
// route, the response fields it evidences ("url, title, markdown", "results[] of {label,
// lat, lon}", "valid (boolean)"). Handlers return untyped values, so the spec is the one
// description of an answer that every route has; the output schema and example of the x402
// Bazaar declaration, OpenAPI and MCP's outputSchema are all derived from it here, once.

//go:embed spec/service-interface.md
var specText string

// specAnswers maps each spec path (neutral segments as written) to its Response cell.
var specAnswers = parseSpecAnswers(specText)

var specRow = regexp.MustCompile(`^\| (GET|POST) \| ([^|]+) \| ([^|]*(?:\\\|[^|]*)*) \| ([^|]*) \|`)

func parseSpecAnswers(spec string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(spec, "\n") {
		m := specRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range strings.Split(m[2], ",") {
			out[strings.TrimSpace(p)] = strings.TrimSpace(m[4])
		}
	}
	return out
}

// specObjects maps the resources the spec describes in their own tables ("webhook inbox",
// "classification result") to their fields, written as a Response cell would be: a route
// whose answer is "published page" answers that resource.
var specObjects = parseSpecObjects(specText)

var (
	specHeading  = regexp.MustCompile(`^### (.+)$`)
	specFieldRow = regexp.MustCompile(`^\| ([a-z_][a-z0-9_.]*) \| ([a-z]+)[^|]*\|`)
	specShapeRow = regexp.MustCompile(`^\| ([A-Z][^|]+?) \| ([^|]+) \|$`)
	// "Gas response of GET /v1/chain/gas:" opens a field table outside the resources.
	specTableIntro = regexp.MustCompile(`^([A-Z][a-z]+ response) of (?:GET|POST) \S+:$`)
	specFieldsRow  = regexp.MustCompile(`^\| ([a-z_][a-z0-9_]*(?:, [a-z_][a-z0-9_]*)+) \| ([a-z]+)[^|]*\|`)
)

func parseSpecObjects(spec string) map[string]string {
	out := map[string]string{}
	var heading string
	var fields []string
	flush := func() {
		if heading != "" && len(fields) > 0 {
			out[heading] = strings.Join(fields, ", ")
		}
		heading, fields = "", nil
	}
	for _, line := range strings.Split(spec, "\n") {
		if m := specHeading.FindStringSubmatch(line); m != nil {
			flush()
			heading = strings.ToLower(m[1])
			continue
		}
		if m := specTableIntro.FindStringSubmatch(line); m != nil {
			flush()
			heading = strings.ToLower(m[1])
			continue
		}
		if m := specFieldsRow.FindStringSubmatch(line); m != nil { // "| note, source | string |"
			for _, name := range strings.Split(m[1], ", ") {
				if m[2] == "string" || m[2] == "object" || m[2] == "array" {
					fields = append(fields, name)
				} else {
					fields = append(fields, name+" ("+m[2]+")")
				}
			}
			continue
		}
		if m := specFieldRow.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], ".") {
			typ := m[2]
			if typ == "string" || typ == "object" || typ == "array" {
				fields = append(fields, m[1]) // a string's format or an object's fields are prose
			} else {
				fields = append(fields, m[1]+" ("+typ+")")
			}
			continue
		}
		if m := specShapeRow.FindStringSubmatch(line); m != nil && heading == "other result objects (shapes)" && m[1] != "Object" {
			// "Verification block (verified retrieval, ...)": the parenthesis says who uses it.
			name, _, _ := strings.Cut(m[1], "(")
			out[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(m[2])
		}
	}
	flush()
	return out
}

// resolveObject turns a Response cell that names a described resource into its fields.
func resolveObject(cell string) string {
	name := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(cell, "(see Resources)")))
	name = strings.TrimSuffix(strings.TrimPrefix(name, "see the "), " below") // "see the gas response below"
	if i := strings.IndexByte(name, ';'); i >= 0 {
		name = strings.TrimSpace(name[:i])
	}
	if f, ok := specObjects[name]; ok {
		return f
	}
	return cell
}

// attachAnswers gives each entry the spec's description of its answer.
func attachAnswers(entries []Entry, n Names) {
	neutral := strings.NewReplacer("<classifieds_a>", n.ClassifiedsA, "<listings_b>", n.ListingsB,
		"<marketplace>", n.Marketplace, "<actor_marketplace>", n.ActorMarketplace)
	byPath := make(map[string]string, len(specAnswers))
	for p, a := range specAnswers {
		byPath[neutral.Replace(p)] = a
	}
	for i := range entries {
		if entries[i].Returns == "" {
			entries[i].Returns = byPath[entries[i].Path]
		}
	}
}

// field is one documented answer field: its JSON type ("" when the spec does not say) and,
// for an object or an array of objects, the fields inside.
type field struct {
	name, typ, items string
	fields           []field
}

// answerFields reads the fields a Response cell names. Only what reads as a field name is
// kept ("score (0-100)", "results[] of {label}", "prix_m2{median}"); prose ("factor
// breakdown", "also VAT") is left out, and text after a ";" is commentary.
func answerFields(cell string) []field { return fieldsIn(cell, false) }

var (
	// acronym is a name in capitals: in a list of an answer's fields ("tickers, SIC, state",
	// "nom, SIREN, RNA id") it names what a record holds, not a key; among the keys of an
	// object written out (prix{gazole, SP95/98, E85, GPL}) it is the key.
	acronym = regexp.MustCompile(`^[A-Z]{2,}$`)
	// prose are the lone words of Response cells that describe the answer ("comments[] of
	// {...}, flattened") rather than name a field.
	prose = map[string]bool{"flattened": true}
)

func fieldsIn(cell string, keys bool) []field {
	if i := depthIndex(cell, ';'); i >= 0 {
		cell = cell[:i]
	}
	var out []field
	seen := map[string]bool{}
	for _, part := range splitDepth(cell, ',') {
		if strings.Contains(part, " with ") || strings.HasPrefix(strings.TrimSpace(part), "plus ") {
			break // "listings with type, rooms", "nom, plus officers, HQ": what follows is prose
		}
		if part = strings.TrimSpace(part); prose[part] || (!keys && acronym.MatchString(part)) {
			continue
		}
		for _, name := range variants(part) {
			f, ok := parseField(name)
			if ok && !seen[f.name] {
				seen[f.name] = true
				out = append(out, f)
			}
		}
	}
	return out
}

var variantName = regexp.MustCompile(`^([A-Za-z_]+)([0-9]+)((?:/[0-9]+)+)$`)

// variants spells out a name written with its variants' suffixes: "SP95/98" is SP95 and SP98.
func variants(s string) []string {
	m := variantName.FindStringSubmatch(s)
	if m == nil {
		return []string{s}
	}
	out := []string{m[1] + m[2]}
	for _, n := range strings.Split(m[3][1:], "/") {
		out = append(out, m[1]+n)
	}
	return out
}

var fieldHead = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(\[\])?`)

func parseField(s string) (field, bool) {
	m := fieldHead.FindStringSubmatch(s)
	if m == nil {
		return field{}, false
	}
	f := field{name: m[1]}
	rest := strings.TrimSpace(s[len(m[0]):])
	array := m[2] != ""
	var inner string
	keys := false
	switch {
	case strings.HasPrefix(rest, "{"):
		inner, rest = group(rest)
		f.typ, keys = "object", true
	case array && strings.HasPrefix(rest, "of {"):
		inner, rest = group(strings.TrimSpace(rest[2:]))
		f.items = "object"
	}
	if inner != "" {
		f.fields = fieldsIn(inner, keys)
	}
	if f.typ == "" && !array && strings.TrimSpace(rest) == "" {
		// A bare name that a described object is named after ("verification": the
		// verification block) has that object's fields.
		if inner, ok := specObjects[f.name+" block"]; ok {
			f.typ, f.fields = "object", answerFields(inner)
		}
	}
	if t, ok := strings.CutPrefix(rest, ":"); ok { // "index: integer"
		rest = "(" + strings.TrimSpace(t) + ")"
	}
	if strings.HasPrefix(rest, "(") {
		note, after := group(rest)
		rest = after
		note, _, _ = strings.Cut(note, ",") // "number, USD": the type, then its unit
		switch {
		case note == "boolean" || note == "integer" || note == "number" || note == "string" || note == "object":
			f.typ = note
		case strings.HasPrefix(note, "array"):
			array = true
		case regexp.MustCompile(`^-?[0-9]+-[0-9]+$`).MatchString(note):
			f.typ = "number"
		}
	}
	if array {
		f.typ = "array"
	}
	if strings.TrimSpace(rest) != "" {
		return field{}, false // the name begins a phrase, not a field
	}
	return f, true
}

// group returns the text inside the bracket s opens and what follows its closing bracket.
func group(s string) (inner, rest string) {
	depth := 0
	for i, c := range s {
		switch c {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
			if depth == 0 {
				return s[1:i], s[i+1:]
			}
		}
	}
	return "", ""
}

func depthIndex(s string, sep rune) int {
	depth := 0
	for i, c := range s {
		switch c {
		case '{', '(', '[':
			depth++
		case '}', ')', ']':
			depth--
		case sep:
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func splitDepth(s string, sep rune) []string {
	var parts []string
	for {
		i := depthIndex(s, sep)
		if i < 0 {
			return append(parts, s)
		}
		parts = append(parts, s[:i])
		s = s[i+1:]
	}
}

// OutputSchema is the JSON Schema (2020-12) of a JSON answer: an object with the fields the
// spec documents for the route (typed where the spec says their type), open to more ("a
// route may return more"). A binary answer has none (nil).
func (e *Entry) OutputSchema() map[string]any {
	if e.MediaType() != "application/json" {
		return nil
	}
	s := objectSchema(answerFields(resolveObject(e.Returns)))
	if e.Returns != "" {
		s["description"] = e.Returns
	}
	return s
}

func objectSchema(fields []field) map[string]any {
	props := map[string]any{}
	for _, f := range fields {
		props[f.name] = f.schema()
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": true}
}

// schema is a field's JSON Schema. A field the spec names is always present but null when
// unknown (an upstream that did not answer, a flag nobody can tell), so its type admits null.
func (f field) schema() map[string]any {
	var s map[string]any
	switch {
	case f.typ == "array" && f.items == "object":
		s = map[string]any{"type": "array", "items": objectSchema(f.fields)}
	case f.typ == "object":
		s = objectSchema(f.fields)
	case f.typ != "":
		s = map[string]any{"type": f.typ}
	default:
		return map[string]any{} // the spec names the field, not its type
	}
	s["type"] = []any{s["type"], "null"}
	return s
}

// OutputExample is the shape of a JSON answer with the documented fields: each typed field
// holds its type's zero value, an untyped one null (the spec does not show values). nil for
// a binary answer.
func (e *Entry) OutputExample() map[string]any {
	if e.MediaType() != "application/json" {
		return nil
	}
	return exampleOf(answerFields(resolveObject(e.Returns)))
}

func exampleOf(fields []field) map[string]any {
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		out[f.name] = f.example()
	}
	return out
}

func (f field) example() any {
	switch f.typ {
	case "array":
		if f.items == "object" {
			return []any{exampleOf(f.fields)}
		}
		return []any{}
	case "object":
		return exampleOf(f.fields)
	case "boolean":
		return false
	case "integer", "number":
		return 0
	case "string":
		return ""
	}
	return nil
}

// MissingFields lists what a JSON answer lacks of the fields the spec names for the route,
// by their path ("tls.issuer", "steps[].id"), and the named fields whose value is not of the
// type the spec gives. A field the spec names is always present, null when unknown; more
// fields are fine. A binary answer, or an answer that is not an object, lacks nothing.
func (e *Entry) MissingFields(answer any) []string {
	m, ok := answer.(map[string]any)
	if !ok || e.MediaType() != "application/json" {
		return nil
	}
	return missing("", answerFields(resolveObject(e.Returns)), m)
}

// glosses are the English words the spec writes for a French answer's keys ("ville, ...
// city"; "revenue" for chiffre_affaires): an answer with the French key has the field.
// etude-implantation gives its demographics as the commune's population and density.
var glosses = map[string][]string{
	"city":         {"ville"},
	"revenue":      {"chiffre_affaires"},
	"area":         {"surface_km2"},
	"department":   {"departement"},
	"directors":    {"dirigeants"},
	"officers":     {"dirigeants"},
	"financials":   {"finances", "comptes"},
	"energy":       {"energie"},
	"risks":        {"risques"},
	"demographics": {"demographie", "commune"},
}

func missing(prefix string, fields []field, m map[string]any) []string {
	var out []string
	for _, f := range fields {
		v, ok := m[f.name]
		for _, key := range glosses[f.name] {
			if !ok {
				v, ok = m[key]
			}
		}
		switch {
		case !ok:
			out = append(out, prefix+f.name)
		case v == nil:
		case !f.holds(v):
			out = append(out, prefix+f.name+" (not "+f.typ+")")
		case f.typ == "object":
			out = append(out, missing(prefix+f.name+".", f.fields, v.(map[string]any))...)
		case f.typ == "array" && f.items == "object":
			for _, it := range v.([]any) {
				o, ok := it.(map[string]any)
				if !ok {
					out = append(out, prefix+f.name+"[] (not object)")
					break
				}
				if lack := missing(prefix+f.name+"[].", f.fields, o); len(lack) > 0 {
					out = append(out, lack...)
					break // one item is enough to show what the items lack
				}
			}
		}
	}
	return out
}

// holds reports whether a non-null JSON value is of the field's documented type.
func (f field) holds(v any) bool {
	switch f.typ {
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == float64(int64(n))
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true
}
