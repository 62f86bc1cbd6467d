package mica

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// legalForms are the legal-form words dropped from the end of a firm name before comparing
// (after accents, case and punctuation are gone, and dotted abbreviations are joined: "S.A."
// is "sa", "B.V." is "bv", "Sp. z o.o." is "sp z oo"). Several may follow each other
// ("GmbH & Co. KG").
var legalForms = [][]string{
	{"sp", "z", "oo"}, {"spolka", "z", "oo"}, {"s", "r", "o"}, {"co", "kg"}, {"co", "kgaa"},
	{"ltd"}, {"limited"}, {"plc"}, {"llc"}, {"llp"}, {"inc"}, {"corp"}, {"corporation"}, {"company"}, {"co"},
	{"gmbh"}, {"ag"}, {"kg"}, {"kgaa"}, {"ug"}, {"ohg"}, {"eg"}, {"ev"}, {"se"},
	{"sa"}, {"sas"}, {"sasu"}, {"sarl"}, {"eurl"}, {"sca"}, {"scs"}, {"snc"},
	{"bv"}, {"nv"}, {"vof"}, {"cv"}, {"bvba"}, {"srl"}, {"sprl"}, {"spa"}, {"sapa"}, {"scarl"},
	{"sl"}, {"slu"}, {"sau"}, {"lda"}, {"ltda"},
	{"as"}, {"asa"}, {"aps"}, {"ab"}, {"publ"}, {"oy"}, {"oyj"}, {"hf"}, {"ehf"},
	{"sro"}, {"zrt"}, {"kft"}, {"nyrt"}, {"doo"}, {"dd"}, {"ad"}, {"ead"}, {"ood"}, {"uab"}, {"sia"}, {"ou"},
	{"ike"}, {"ae"}, {"ltd", "liability", "co"}, {"ksc"},
}

// Normalize folds a firm name for comparison: accents removed, lower case, "&" and
// punctuation as spaces (dots of abbreviations joined), legal-form words dropped from the end.
func Normalize(name string) string {
	words := Words(name)
	for {
		cut := false
		for _, f := range legalForms {
			if len(words) > len(f) && equalTail(words, f) {
				words = words[:len(words)-len(f)]
				cut = true
				break
			}
		}
		if !cut {
			break
		}
	}
	return strings.Join(words, " ")
}

// Words splits a name into folded words: accents removed, lower case, every character that
// is not a letter or a digit a separator, except dots and apostrophes, which join ("S.A."
// is one word "sa", "L'Oréal" is "loreal").
func Words(name string) []string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(name) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// combining accent: dropped
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case r == '.' || r == '\'' || r == '’':
			// joins the parts of an abbreviation
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

func equalTail(words, tail []string) bool {
	off := len(words) - len(tail)
	for i, w := range tail {
		if words[off+i] != w {
			return false
		}
	}
	return true
}

// Match grades how a normalised query relates to a normalised name.
type Match int

// Grades, best last.
const (
	NoMatch  Match = iota
	Contains       // every word of the query appears, in order, as whole words of the name
	Exact          // equal once normalised
)

// Grade compares a normalised query with a normalised name.
func Grade(query, name string) Match {
	if query == "" || name == "" {
		return NoMatch
	}
	if query == name {
		return Exact
	}
	if strings.Contains(" "+name+" ", " "+query+" ") {
		return Contains
	}
	return NoMatch
}
