package apitest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// At walks a decoded JSON value by object keys (string) and array indexes (int); nil when
// the path does not exist.
func At(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k < 0 || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// Decode parses a JSON answer, failing the test when it is not JSON.
func Decode(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// Golden compares a JSON value (or a JSON text as []byte), indented, with
// testdata/golden/<name>.json; update rewrites the file first (go test -update).
func Golden(t testing.TB, name string, v any, update bool) {
	t.Helper()
	if b, ok := v.([]byte); ok {
		v = Decode(t, b)
	}
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	GoldenFile(t, name+".json", append(got, '\n'), update)
}

// GoldenFile compares bytes (a text rendering, a page) with testdata/golden/<file>; update
// rewrites the file first (go test -update).
func GoldenFile(t testing.TB, file string, got []byte, update bool) {
	t.Helper()
	path := filepath.Join("testdata", "golden", file)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("answer differs from %s:\n%s", path, got)
	}
}
