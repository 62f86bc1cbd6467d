package article

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The extractors choose a region of the page; inside it, news and blog templates still
// interleave short blocks that are not the text: cross-links to other articles ("Read
// also: ..."), calls to subscribe or follow, and legal notices. Both libraries judge by
// markup (class names, link density) and keep them when the markup looks like the text's.
// These rules judge a short block by its words, in the languages the appliance serves most.
var (
	// promoLead opens a cross-link: a label, then a colon, then another article's title.
	promoLead = regexp.MustCompile(`(?i)^(lea|lee|mire|mira|vea|ver|puedes ver|le puede interesar|te puede interesar|read|see|related|recommended|also read|more|à lire|a lire|lire|voir|lesen sie|lies|auch interessant|mehr zum thema|weiterlesen|leggi)( (también|tambien|más|mas|además|also|more|aussi|auch|anche|on this|mehr))?\s*[:»]`)
	// promoHeading is a heading over a list of other articles, or of other products.
	promoHeading = regexp.MustCompile(`(?i)^(contenidos? relacionados?|art[íi]culos relacionados|noticias relacionadas|related( articles| stories| posts| content| news)?|you (may|might) also like|more (stories|articles|news)|most (read|popular)|trending( now)?|neueste artikel|weitere artikel|ähnliche artikel|das könnte sie auch interessieren|schon gelesen\??|meist(gelesen| gelesen|-diskutiert| diskutiert)|à lire aussi|lire aussi|sur le même sujet|les plus lus|lo más leído|tambi[ée]n te puede interesar|customers (who bought this( item)? )?also (viewed|bought)|frequently bought together|(similar|related) (products|items)|vous aimerez aussi|produits similaires|ähnliche produkte|kunden kauften auch|productos (relacionados|similares))$`)
	// callToAction is a short block asking the reader to do something other than read.
	callToAction = regexp.MustCompile(`(?i)(subscribe|subscription|subscriber|suscr[íi]b|suscripci[óo]n|abonnez|abonnier|newsletter|sign up|inscrivez|reg[íi]strate|follow (us|the)|s[íi]guenos|folgen sie|suivez-nous|[úu]nete|telegram|whatsapp|canal de youtube|youtube channel|all rights reserved|todos los derechos|alle rechte|tous droits|copyrighted|written permission|not responsible for the opinions|comments are moderated|hazte miembro|vergiss nicht zu teilen|share this (article|story))`)
)

// maxPromo is the longest block the word rules may drop: past it a block is text that
// happens to mention a newsletter.
const maxPromo = 220

// prune removes cross-links, calls to action and related-article lists from the content.
func prune(root *html.Node) {
	var leaves []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && isBlock(n) && !hasBlockChild(n) {
			leaves = append(leaves, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	for _, n := range leaves {
		if n.Parent == nil || inside(n, atom.Table) || inside(n, atom.Pre) {
			continue
		}
		t := collapse(textOf(n))
		if t == "" || utf8.RuneCountInString(t) > maxPromo {
			continue
		}
		switch {
		case isHeading(n) && promoHeading.MatchString(strings.TrimRight(t, ": ")):
			if next := nextElement(n); next != nil && (next.DataAtom == atom.Ul || next.DataAtom == atom.Ol) {
				next.Parent.RemoveChild(next)
			}
			n.Parent.RemoveChild(n)
		case promoLead.MatchString(t), callToAction.MatchString(t):
			n.Parent.RemoveChild(n)
		}
	}
}

var pruneBlocks = map[atom.Atom]bool{atom.P: true, atom.Div: true, atom.Li: true, atom.H1: true,
	atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true, atom.Blockquote: true,
	atom.Section: true, atom.Ul: true, atom.Ol: true, atom.Table: true, atom.Pre: true, atom.Dl: true,
	atom.Dd: true, atom.Dt: true, atom.Figure: true, atom.Figcaption: true, atom.Article: true}

func isBlock(n *html.Node) bool { return pruneBlocks[n.DataAtom] }

func hasBlockChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (isBlock(c) || hasBlockChild(c)) {
			return true
		}
	}
	return false
}

func isHeading(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func inside(n *html.Node, a atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == a {
			return true
		}
	}
	return false
}

func nextElement(n *html.Node) *html.Node {
	for s := n.NextSibling; s != nil; s = s.NextSibling {
		if s.Type == html.ElementNode {
			return s
		}
	}
	return nil
}
