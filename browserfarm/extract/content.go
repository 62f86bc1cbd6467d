// Package extract turns a rendered page (the HTML and visible text a browser returned) into
// the structured answers of the web routes: links, metadata, JSON-LD, tables, headings,
// forms, navigation zones, contacts and prices, and the hashing of content. The main content
// itself is package article, beside it. It is pure Go over the DOM (no browser), so every
// function is tested with golden files.
package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode/utf8"
)

var spaces = regexp.MustCompile(`\s+`)

// Normalise collapses whitespace so that re-rendering the same content hashes the same.
func Normalise(s string) string {
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// Hash is the SHA-256 (hex) of the normalised text and its length in characters.
func Hash(s string) (string, int) {
	n := Normalise(s)
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:]), utf8.RuneCountInString(n)
}

// Words counts whitespace-separated words.
func Words(s string) int { return len(strings.Fields(s)) }

// Truncate cuts s to at most n characters without splitting a rune.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
