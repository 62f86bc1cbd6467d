// Package fold folds French text for matching: lower case, accents and ligatures removed.
package fold

import "strings"

var accents = strings.NewReplacer(
	"à", "a", "â", "a", "ä", "a", "á", "a", "ã", "a", "å", "a",
	"ç", "c", "é", "e", "è", "e", "ê", "e", "ë", "e",
	"î", "i", "ï", "i", "í", "i", "ì", "i",
	"ô", "o", "ö", "o", "ó", "o", "ò", "o", "õ", "o",
	"ù", "u", "û", "u", "ü", "u", "ú", "u", "ÿ", "y", "ñ", "n",
	"œ", "oe", "æ", "ae", "’", "'",
)

// String lower-cases s and removes French accents and ligatures.
func String(s string) string { return accents.Replace(strings.ToLower(s)) }

// Contains reports whether needle occurs in haystack, both folded.
func Contains(haystack, needle string) bool {
	return strings.Contains(String(haystack), String(needle))
}
