package catalog

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
)

// Type is a parameter's value type after decoding.
type Type uint8

const (
	String Type = iota
	Int
	Number
	Bool
	List   // a JSON array of strings; in a query, JSON array text, repeated keys or comma-separated text
	Object // a JSON object or array, passed through (e.g. a schema)
)

func (t Type) jsonType() string {
	return [...]string{"string", "integer", "number", "boolean", "array", "object"}[t]
}

// Param declares one request parameter and its constraints. Query text and JSON values are
// both accepted: "12" and 12 are the same integer.
type Param struct {
	Name     string
	Type     Type
	Doc      string
	Required bool
	// OneOf names a group: at least one parameter of the group must be present.
	OneOf string
	// Min and Max bound a number's value, a string's length in characters, or a list's length.
	Min, Max *float64
	// ItemMax bounds each list item's length in characters.
	ItemMax int
	// Distinct asks a list's items to be non-empty and distinct, case and surrounding spaces
	// aside (labels, field names), so a repeat is a 400 before any 402.
	Distinct bool
	// MaxBytes bounds a string's size in bytes (a page limit is about storage, not characters).
	MaxBytes int
	// With names a parameter that must be given whenever this one is (lat goes with lon).
	With string
	Enum []string
	// Format names a validator in formats (url, siren, evm_address, ...).
	Format  string
	Default any
}

// Param constructors keep the table one line per parameter.

func S(name, doc string) Param   { return Param{Name: name, Type: String, Doc: doc} }
func I(name, doc string) Param   { return Param{Name: name, Type: Int, Doc: doc} }
func N(name, doc string) Param   { return Param{Name: name, Type: Number, Doc: doc} }
func B(name, doc string) Param   { return Param{Name: name, Type: Bool, Doc: doc} }
func L(name, doc string) Param   { return Param{Name: name, Type: List, Doc: doc} }
func Obj(name, doc string) Param { return Param{Name: name, Type: Object, Doc: doc} }

func (p Param) Req() Param               { p.Required = true; return p }
func (p Param) Group(g string) Param     { p.OneOf = g; return p }
func (p Param) Fmt(f string) Param       { p.Format = f; return p }
func (p Param) Of(vals ...string) Param  { p.Enum = vals; return p }
func (p Param) Def(v any) Param          { p.Default = v; return p }
func (p Param) Each(maxChars int) Param  { p.ItemMax = maxChars; return p }
func (p Param) Unique() Param            { p.Distinct = true; return p }
func (p Param) Bytes(max int) Param      { p.MaxBytes = max; return p }
func (p Param) Needs(other string) Param { p.With = other; return p }
func (p Param) Range(min, max float64) Param {
	p.Min, p.Max = &min, &max
	return p
}
func (p Param) AtMost(max float64) Param  { p.Max = &max; return p }
func (p Param) AtLeast(min float64) Param { p.Min = &min; return p }

// Args holds validated parameter values: string, int64, float64, bool, []string or any (Object).
type Args map[string]any

func (a Args) Has(name string) bool { _, ok := a[name]; return ok }

func (a Args) Str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a Args) Int(name string) int64 {
	n, _ := a[name].(int64)
	return n
}

func (a Args) Float(name string) float64 {
	switch v := a[name].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return 0
}

func (a Args) Bool(name string) bool {
	b, _ := a[name].(bool)
	return b
}

func (a Args) List(name string) []string {
	l, _ := a[name].([]string)
	return l
}

func (a Args) Any(name string) any { return a[name] }

// Decode validates raw input against the entry's parameters. raw holds query text (string)
// or decoded JSON values. Unknown names are ignored, so clients may send extra fields.
// The first violation is returned as a 400 that names the parameter and the rule.
func (e *Entry) Decode(raw map[string]any) (Args, error) {
	args := make(Args, len(e.Params))
	groups := map[string]bool{}
	for i := range e.Params {
		p := &e.Params[i]
		v, present := raw[p.Name]
		if present {
			if s, ok := v.(string); ok && strings.TrimSpace(s) == "" && p.Type != String {
				present = false
			}
			if v == nil {
				present = false
			}
		}
		if p.OneOf != "" {
			if _, seen := groups[p.OneOf]; !seen {
				groups[p.OneOf] = false
			}
		}
		if !present {
			if p.Required {
				return nil, apierr.BadParam(p.Name, "%s is required", p.Name)
			}
			if p.Default != nil {
				args[p.Name] = p.Default
			}
			continue
		}
		val, err := p.coerce(v)
		if err != nil {
			return nil, err
		}
		if err := p.check(e.formatSet(), val); err != nil {
			return nil, err
		}
		args[p.Name] = val
		if p.OneOf != "" {
			groups[p.OneOf] = true
		}
	}
	for _, p := range e.Params {
		if p.With != "" && args.Has(p.Name) && !args.Has(p.With) {
			return nil, apierr.BadParam(p.With, "%s is required with %s", p.With, p.Name)
		}
	}
	for _, g := range sortedKeys(groups) {
		if !groups[g] {
			names := e.groupNames(g)
			return nil, apierr.BadParam(names[0], "one of %s is required", strings.Join(names, ", "))
		}
	}
	if e.Check != nil {
		if err := e.Check(args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

func (e *Entry) groupNames(g string) []string {
	var names []string
	for _, p := range e.Params {
		if p.OneOf == g {
			names = append(names, p.Name)
		}
	}
	return names
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Repeated holds the values of a query key given more than once (?ids=a&ids=b), in order.
// Only a list parameter may repeat: each value is one item, commas and all.
type Repeated []string

func (p *Param) coerce(v any) (any, error) {
	if r, ok := v.(Repeated); ok {
		if p.Type != List {
			return nil, apierr.BadParam(p.Name, "%s is given %d times; only a list parameter may repeat", p.Name, len(r))
		}
		items := make([]any, 0, len(r))
		for _, it := range r {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		v = items
	}
	switch x := v.(type) { // Go literals in examples and defaults
	case int:
		v = float64(x)
	case int64:
		v = float64(x)
	case []string:
		items := make([]any, len(x))
		for i, it := range x {
			items[i] = it
		}
		v = items
	}
	bad := func(want string) error {
		return apierr.BadParam(p.Name, "%s must be %s", p.Name, want)
	}
	switch p.Type {
	case String:
		switch x := v.(type) {
		case string:
			if t := strings.TrimSpace(x); len(t) < len(x) {
				return t, nil
			}
			return v, nil // already boxed: no copy of the string into a new interface
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		case json.Number:
			return x.String(), nil
		case bool:
			return strconv.FormatBool(x), nil
		}
		return nil, bad("a string")
	case Int:
		var f float64
		switch x := v.(type) {
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, bad("an integer")
			}
			return n, nil
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, bad("an integer")
			}
			return n, nil
		case float64:
			f = x
		default:
			return nil, bad("an integer")
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return nil, bad("an integer")
		}
		return int64(f), nil
	case Number:
		var f float64
		var err error
		switch x := v.(type) {
		case string:
			f, err = strconv.ParseFloat(strings.TrimSpace(x), 64)
		case json.Number:
			f, err = x.Float64()
		case float64:
			f = x
		default:
			return nil, bad("a number")
		}
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("a number")
		}
		return f, nil
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "1", "yes", "on":
				return true, nil
			case "false", "0", "no", "off":
				return false, nil
			}
		}
		return nil, bad("a boolean (true or false)")
	case List:
		var items []string
		switch x := v.(type) {
		case string:
			// JSON array text carries items that hold commas (?ids=["a,b","c"]).
			if t := strings.TrimSpace(x); strings.HasPrefix(t, "[") {
				if err := json.Unmarshal([]byte(t), &items); err != nil {
					return nil, bad(`a JSON array of strings (["a","b"]), or comma-separated text`)
				}
				break
			}
			for _, it := range strings.Split(x, ",") {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
		case []any:
			for _, it := range x {
				s, ok := it.(string)
				if !ok {
					return nil, bad("a list of strings")
				}
				items = append(items, s)
			}
		default:
			return nil, bad("a list of strings (JSON array or comma-separated text)")
		}
		return items, nil
	case Object:
		if s, ok := v.(string); ok {
			var obj any
			if err := json.Unmarshal([]byte(s), &obj); err == nil {
				return obj, nil
			}
			return s, nil
		}
		return v, nil
	}
	return nil, bad("valid")
}

func (p *Param) check(fs formatSet, v any) error {
	switch x := v.(type) {
	case string:
		n := float64(len([]rune(x)))
		if p.Min != nil && n < *p.Min {
			return apierr.BadParam(p.Name, "%s must be at least %s characters", p.Name, num(*p.Min))
		}
		if p.Max != nil && n > *p.Max {
			return apierr.BadParam(p.Name, "%s must be at most %s characters", p.Name, num(*p.Max))
		}
		if p.MaxBytes > 0 && len(x) > p.MaxBytes {
			return apierr.BadParam(p.Name, "%s is %d bytes; at most %d bytes are accepted", p.Name, len(x), p.MaxBytes)
		}
		if err := p.checkEnum(x); err != nil {
			return err
		}
		if p.Format != "" {
			if err := fs.check(p.Format, x); err != nil {
				return apierr.BadParam(p.Name, "%s %s", p.Name, err.Error())
			}
		}
	case int64:
		if err := p.checkRange(float64(x)); err != nil {
			return err
		}
	case float64:
		if err := p.checkRange(x); err != nil {
			return err
		}
	case []string:
		n := float64(len(x))
		if p.Min != nil && n < *p.Min {
			return apierr.BadParam(p.Name, "%s needs at least %s items", p.Name, num(*p.Min))
		}
		if p.Max != nil && n > *p.Max {
			return apierr.BadParam(p.Name, "%s takes at most %s items", p.Name, num(*p.Max))
		}
		var seen map[string]bool // only for Distinct lists
		for i, it := range x {
			if p.ItemMax > 0 && len([]rune(it)) > p.ItemMax {
				return apierr.BadParam(p.Name, "%s[%d] must be at most %d characters", p.Name, i, p.ItemMax)
			}
			if p.Distinct {
				k := strings.ToLower(strings.TrimSpace(it))
				if k == "" {
					return apierr.BadParam(p.Name, "%s[%d] must not be empty", p.Name, i)
				}
				if seen[k] {
					return apierr.BadParam(p.Name, "%s lists %q twice", p.Name, it)
				}
				if seen == nil {
					seen = map[string]bool{}
				}
				seen[k] = true
			}
			if err := p.checkEnum(it); err != nil {
				return err
			}
			if p.Format != "" {
				if err := fs.check(p.Format, it); err != nil {
					return apierr.BadParam(p.Name, "%s[%d] %s", p.Name, i, err.Error())
				}
			}
		}
	}
	return nil
}

func (p *Param) checkRange(f float64) error {
	if (p.Min != nil && f < *p.Min) || (p.Max != nil && f > *p.Max) {
		switch {
		case p.Min != nil && p.Max != nil:
			return apierr.BadParam(p.Name, "%s must be between %s and %s", p.Name, num(*p.Min), num(*p.Max))
		case p.Min != nil:
			return apierr.BadParam(p.Name, "%s must be at least %s", p.Name, num(*p.Min))
		default:
			return apierr.BadParam(p.Name, "%s must be at most %s", p.Name, num(*p.Max))
		}
	}
	return nil
}

func (p *Param) checkEnum(s string) error {
	if len(p.Enum) == 0 || slices.Contains(p.Enum, s) {
		return nil
	}
	return apierr.BadParam(p.Name, "%s must be one of %s", p.Name, strings.Join(p.Enum, ", "))
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Schema is the JSON Schema of the entry's input, derived from Params.
func (e *Entry) Schema() map[string]any {
	props := map[string]any{}
	var required []string
	for _, p := range e.Params {
		props[p.Name] = p.schema()
		if p.Required {
			required = append(required, p.Name)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": true}
	if len(required) > 0 {
		s["required"] = required
	}
	deps := map[string]any{}
	for _, p := range e.Params {
		if p.With != "" {
			deps[p.Name] = []string{p.With}
		}
	}
	if len(deps) > 0 {
		s["dependentRequired"] = deps
	}
	var anyOf []any
	seen := map[string]bool{}
	for _, p := range e.Params {
		if p.OneOf == "" || seen[p.OneOf] {
			continue
		}
		seen[p.OneOf] = true
		var alts []any
		for _, name := range e.groupNames(p.OneOf) {
			alts = append(alts, map[string]any{"required": []string{name}})
		}
		anyOf = append(anyOf, map[string]any{"anyOf": alts})
	}
	switch len(anyOf) {
	case 0:
	case 1:
		s["anyOf"] = anyOf[0].(map[string]any)["anyOf"]
	default:
		s["allOf"] = anyOf
	}
	return s
}

func (p *Param) schema() map[string]any {
	s := map[string]any{"type": p.Type.jsonType()}
	if p.Doc != "" {
		s["description"] = p.Doc
	}
	if p.Type == Object {
		delete(s, "type")
	}
	lenKeys := map[Type][2]string{String: {"minLength", "maxLength"}, List: {"minItems", "maxItems"}}
	if k, ok := lenKeys[p.Type]; ok {
		if p.Min != nil {
			s[k[0]] = int(*p.Min)
		}
		if p.Max != nil {
			s[k[1]] = int(*p.Max)
		}
	} else if p.Type == Int || p.Type == Number {
		if p.Min != nil {
			s["minimum"] = *p.Min
		}
		if p.Max != nil {
			s["maximum"] = *p.Max
		}
	}
	item := map[string]any{"type": "string"}
	target := s
	if p.Type == List {
		s["items"] = item
		target = item
		if p.ItemMax > 0 {
			item["maxLength"] = p.ItemMax
		}
		if p.Distinct {
			item["minLength"] = 1
			s["uniqueItems"] = true
		}
	}
	if len(p.Enum) > 0 {
		target["enum"] = p.Enum
	}
	if p.Format != "" {
		if f, ok := formats[p.Format]; ok && f.pattern != "" {
			target["pattern"] = f.pattern
		}
		if f, ok := formats[p.Format]; ok && f.jsonFormat != "" {
			target["format"] = f.jsonFormat
		}
	}
	if p.Default != nil {
		s["default"] = p.Default
	}
	return s
}

// Key identifies a call by route and validated arguments: the ledger's request hash, the cache
// key and the idempotent-replay key. Params are visited in declaration order, so equal args
// give equal keys whatever order or spelling (GET text or POST JSON) the client used.
func (e *Entry) Key(args Args) string {
	b := make([]byte, 0, 64)
	b = append(b, e.ID...)
	b = append(b, '?')
	for _, p := range e.Params {
		v, ok := args[p.Name]
		if !ok {
			continue
		}
		b = append(b, p.Name...)
		b = append(b, '=')
		switch x := v.(type) {
		case string:
			b = strconv.AppendQuote(b, x)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case float64:
			b = strconv.AppendFloat(b, x, 'g', -1, 64)
		case bool:
			b = strconv.AppendBool(b, x)
		case []string:
			for i, it := range x {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, it)
			}
		default:
			j, _ := json.Marshal(x)
			b = append(b, j...)
		}
		b = append(b, '&')
	}
	return string(b)
}
