// Package unitfile reads systemd and mkosi style files for tests (systemd/ and image/ check
// the units and the image configuration they ship).
package unitfile

import (
	"bufio"
	"os"
	"sort"
	"strings"
	"testing"
)

// Read reads a systemd/mkosi style file: section → key → values, in order. An indented line
// continues the previous key's value (mkosi's multi-line Packages=).
func Read(t testing.TB, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string][]string{}
	section, last := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasPrefix(trimmed, ";"):
		case strings.HasPrefix(trimmed, "[") && strings.HasSuffix(trimmed, "]"):
			section, last = strings.Trim(trimmed, "[]"), ""
			if out[section] == nil {
				out[section] = map[string][]string{}
			}
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				t.Fatalf("%s: continuation line without a key: %q", path, line)
			}
			out[section][last] = append(out[section][last], strings.Fields(trimmed)...)
		default:
			k, v, ok := strings.Cut(trimmed, "=")
			if !ok {
				t.Fatalf("%s: not KEY=VALUE: %q", path, line)
			}
			if out[section] == nil {
				out[section] = map[string][]string{}
			}
			last = k
			out[section][k] = append(out[section][k], strings.Fields(v)...)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Flat is Read with the sections merged: key → its values joined by a space (a key set in
// several sections gets them in the sections' name order).
func Flat(t testing.TB, path string) map[string]string {
	t.Helper()
	conf := Read(t, path)
	sections := make([]string, 0, len(conf))
	for s := range conf {
		sections = append(sections, s)
	}
	sort.Strings(sections)
	kv := map[string]string{}
	for _, s := range sections {
		for k, v := range conf[s] {
			kv[k] = strings.TrimSpace(kv[k] + " " + strings.Join(v, " "))
		}
	}
	return kv
}
