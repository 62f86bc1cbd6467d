// Package wire holds the JSON types that connectors use where providers are known to vary the
// shape of one field between answers: a number sent as text, one object sent where a list is
// documented. Decoding stays strict for everything else, so a shape nobody has seen still
// fails, names its field, and becomes a 502. Header does the same for the columns of CSV
// tables (csv.go).
package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

var null = []byte("null")

// mismatch is the error encoding/json itself gives for a wrong type, so that the decoder
// adds the path of the field (results.gazole_prix) and the connector can name it.
func mismatch(text string, t reflect.Type) error {
	return &json.UnmarshalTypeError{Value: "string " + strconv.Quote(text), Type: t}
}

// unquote returns the text of a JSON string, or the raw bytes of any other value.
func unquote(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		return strings.TrimSpace(s), nil
	}
	return string(b), nil
}

// Float is a number that may arrive as a JSON number or as text ("1.770", "1,770"); null
// and "" leave it unset.
type Float struct {
	V     float64
	Valid bool
}

func (f *Float) UnmarshalJSON(b []byte) error {
	*f = Float{}
	if bytes.Equal(bytes.TrimSpace(b), null) {
		return nil
	}
	s, err := unquote(b)
	if err != nil {
		return err
	}
	if s == "" {
		return nil
	}
	v, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	if err != nil {
		return mismatch(s, reflect.TypeFor[float64]())
	}
	*f = Float{V: v, Valid: true}
	return nil
}

func (f Float) MarshalJSON() ([]byte, error) {
	if !f.Valid {
		return null, nil
	}
	return json.Marshal(f.V)
}

// Ptr is the value as a pointer, nil when unset.
func (f Float) Ptr() *float64 {
	if !f.Valid {
		return nil
	}
	v := f.V
	return &v
}

// Int is an integer that may arrive as a JSON number or as text ("1"); null and "" leave it
// unset.
type Int struct {
	V     int64
	Valid bool
}

func (n *Int) UnmarshalJSON(b []byte) error {
	*n = Int{}
	if bytes.Equal(bytes.TrimSpace(b), null) {
		return nil
	}
	s, err := unquote(b)
	if err != nil {
		return err
	}
	if s == "" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// 12.0 is an integer written by a float serializer.
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return mismatch(s, reflect.TypeFor[int64]())
		}
		v = int64(f)
	}
	*n = Int{V: v, Valid: true}
	return nil
}

func (n Int) MarshalJSON() ([]byte, error) {
	if !n.Valid {
		return null, nil
	}
	return json.Marshal(n.V)
}

// List is a list that may arrive as one bare object; null is empty.
type List[T any] []T

func (l *List[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, null):
		*l = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		var v []T
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*l = v
		return nil
	}
	var one T
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*l = List[T]{one}
	return nil
}

// Text is an identifier that may arrive as a JSON number or as text (numeroBio: 200807 or
// "200807"); it is kept as text, numbers written without exponent.
type Text string

func (t *Text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, null):
		*t = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		s, err := unquote(b)
		*t = Text(s)
		return err
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return mismatch(string(b), reflect.TypeFor[string]())
	}
	*t = Text(n.String())
	return nil
}
