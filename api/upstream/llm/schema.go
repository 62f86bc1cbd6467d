package llm

import (
	"fmt"
	"math"
	"slices"
)

// Validate checks v (as decoded by encoding/json) against the subset of JSON Schema the
// routes use: type (one or a list, "null" included), properties, required,
// additionalProperties false, enum, items, minItems, maxItems, minimum, maximum. Errors name
// the path of the first offending value.
func Validate(schema map[string]any, v any) error { return validateAt("$", schema, v) }

func validateAt(path string, s map[string]any, v any) error {
	if t, ok := s["type"]; ok && !typeMatches(t, v) {
		return fmt.Errorf("%s: want type %v, got %s", path, t, typeName(v))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return e == v }) {
		return fmt.Errorf("%s: %v is not one of %v", path, v, enum)
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s: missing required field %q", path, r)
			}
		}
		if ap, ok := s["additionalProperties"].(bool); ok && !ap {
			for k := range x {
				if _, ok := props[k]; !ok {
					return fmt.Errorf("%s: unexpected field %q", path, k)
				}
			}
		}
		for k, sub := range props {
			if fv, ok := x[k]; ok {
				if m, ok := sub.(map[string]any); ok {
					if err := validateAt(path+"."+k, m, fv); err != nil {
						return err
					}
				}
			}
		}
	case []any:
		if n, ok := num(s["minItems"]); ok && float64(len(x)) < n {
			return fmt.Errorf("%s: at least %v items", path, n)
		}
		if n, ok := num(s["maxItems"]); ok && float64(len(x)) > n {
			return fmt.Errorf("%s: at most %v items", path, n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				if err := validateAt(fmt.Sprintf("%s[%d]", path, i), items, e); err != nil {
					return err
				}
			}
		}
	case float64:
		if n, ok := num(s["minimum"]); ok && x < n {
			return fmt.Errorf("%s: %v is below %v", path, x, n)
		}
		if n, ok := num(s["maximum"]); ok && x > n {
			return fmt.Errorf("%s: %v is above %v", path, x, n)
		}
	}
	return nil
}

func typeMatches(t any, v any) bool {
	switch tt := t.(type) {
	case string:
		return isType(tt, v)
	case []any:
		return slices.ContainsFunc(tt, func(e any) bool { s, _ := e.(string); return isType(s, v) })
	case []string:
		return slices.ContainsFunc(tt, func(s string) bool { return isType(s, v) })
	}
	return true
}

func isType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func asStrings(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}
