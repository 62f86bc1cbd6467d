// Package injection is the deterministic prompt-injection scanner of /v1/guard: a table of
// rules, each with a stable id, run over the text, over the text with its hidden characters
// removed, and over what its encoded runs (base64, hex, rot13) decode to. Every finding
// carries the matched snippet and its position in the text as given, in Unicode code points
// (not bytes, not UTF-16 units). No model is involved: the same text always gets the same
// findings, score and verdict.
package injection

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rule is one detector.
type Rule struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	Weight   int    `json:"weight"` // score points a match adds
	Doc      string `json:"description"`
	re       *regexp.Regexp
}

// Categories of the issue: instruction override, role play, hidden text, encoded payload,
// exfiltration link, tool-call lure (plus prompt extraction, the usual goal of an override).
const (
	CatOverride   = "instruction_override"
	CatExtraction = "prompt_extraction"
	CatRolePlay   = "role_play"
	CatHidden     = "hidden_text"
	CatEncoded    = "encoded_payload"
	CatExfil      = "exfiltration_link"
	CatToolLure   = "tool_call_lure"
)

func rx(s string) *regexp.Regexp { return regexp.MustCompile(`(?is)` + s) }

// Rules is the rule table; its ids are part of the answer and never reused for another rule.
var Rules = []Rule{
	{ID: "IO-1", Category: CatOverride, Weight: 60, Doc: "ignore/forget/disregard the previous instructions, rules or tasks",
		re: rx(`\b(ignore|ignoring|disregard|forget|skip|override|bypass|drop|abandon|discard|neglect)\b[\s,]+(?:(?:all|any|every|the|your|my|of|these|those|its|previous|prior|above|earlier|preceding|former|initial|original|existing|system|given|current|other|safety)\b[\s,]+){0,4}(instructions?|prompts?|rules|directions|directives|guidelines|tasks?|commands?|context|constraints|restrictions|orders|assignments?|information|everything|programming|training)\b`)},
	{ID: "IO-2", Category: CatOverride, Weight: 60, Doc: "German: vergiss/ignoriere die vorherigen Anweisungen",
		re: rx(`\b(vergiss|vergesse|vergessen|ignoriere|ignorieren|missachte|verwirf|überspringe)\b[\s,]+(?:(?:sie|du|alle[sn]?|die|deine|ihre|vorherigen?|bisherigen?|obigen?|vorangegangenen?|davor|bitte|einfach|jetzt|nun|was|zuvor)\b[\s,]+){0,4}(anweisungen|instruktionen|aufgaben|befehle|regeln|vorgaben|informationen|angaben|alles|gesagt)`)},
	{ID: "IO-3", Category: CatOverride, Weight: 45, Doc: "a new task or instructions replacing the current ones",
		re: rx(`\b(now|from now on|instead)\b[^.\n]{0,40}\b(new|real|actual|next)\s+(task|instructions?|assignment|job|role|goal)\b|\byour\s+new\s+(task|instructions?|assignment|role|goal)\b|\b(neue|nächste|eigentliche)\s+(aufgabe|anweisung|rolle)\b|\bignore\s+(?:the\s+)?above\b|\bstop\s*[-–,:!]+\s*\w`)},
	{ID: "IO-5", Category: CatOverride, Weight: 60, Doc: "forget all instructions, in French, Spanish, Italian, Portuguese, Russian and Croatian",
		re: rx(`\b(oubliez|oublie|ignorez|ignore|olvida|olvidar|olvide|olvidad|ignora|dimentica|esqueça|esqueca|zaboravi)\b[\s,]+(?:(?:toutes|tous|les|todas|todos|las|los|tutte|le|todas|as|sve|vos|tus|previas|précédentes)\b[\s,]+){0,3}(instructions|instrucciones|istruzioni|instruções|instrukcije|consignes|todo|tout)\b|(забудь|забудьте|игнорируй|игнорируйте)\s+(все\s+)?(инструкции|указания|предыдущие)`)},
	{ID: "IO-6", Category: CatOverride, Weight: 45, Doc: "tells the model to answer from outside the supplied documents, or to drop what it was told",
		re: rx(`\b(not|nicht|don'?n?t|do\s+not)\b[^.\n]{0,30}\b(according\s+to|by|in|from|look\s+in|based\s+on)\s+(the\s+)?(provided\s+|given\s+|supplied\s+)?(documents?|articles?|artikeln?|dokumente|context|kontext|sources)\b|\bdisregarding\s+the\b|\b(ignore|igmre|forget|disregard)\w*\s+(about\s+)?(all\s+)?(everything|what\s+(i|you)\s+(said|were\s+told)|wa?ht?'?s\s+before|all\s+provided)|\bdespite\s+what\s+you('ve|\s+have)\s+been\s+told\b|\b(remove|leave|put)\s+all\s+(the\s+)?previous\s+(tasks|information|instructions)\b|\b(lassen\s+sie|lass)\s+alle\s+vorherigen\b|\b(now|nun|jetzt)\s+(new|further|neue|weitere)\s+(tasks|instructions|aufgaben|anweisungen)\s+(follow|folgen)\b|\b(nun|jetzt)\s+folgen\s+(neue|weitere)\s+(aufgaben|anweisungen)\b|\b(additional|new)\s+(instruction|statement|order)\s*[-:–]|\\n\s*(instruction|order|befehl)\s*:|\bvorherigen\s+(instruktionen|anweisungen)\b|\bchange\s+your\s+(instructions|rules|prompt)\b|\bdo\s+not\s+answer\s+this\s+question\s+but\b|\bthat\s+is\s+(done|enough)[.!]\s+now\b|\bdas\s+(genügt|reicht|ist\s+erledigt)[.!]\s+(bitte\s+)*(hilf|nun|jetzt)\b|\bhöre?\s+nicht\s+auf\s+(alles|das)\s+(zuvor|bisher|vorher)\s+gesagte|\b(alle\s+)?(bisherigen|vorherigen)\s+informationen\b[^.\n]{0,40}\b(sind\s+irrelevant|sind\s+nicht)\b`)},
	{ID: "IO-4", Category: CatOverride, Weight: 35, Doc: "forged conversation or system markers inside the data",
		re: rx(`(^|\n)\s*(###\s*)?(system|assistant|developer)\s*(prompt|message|override)?\s*:|<\|?(im_start|im_end|system|endoftext)\|?>|\[/?(INST|SYS)\]|<<SYS>>|\bBEGIN\s+(NEW\s+)?(SYSTEM|ADMIN)\s+(PROMPT|INSTRUCTIONS)\b`)},
	{ID: "PE-1", Category: CatExtraction, Weight: 45, Doc: "asks to reveal the system prompt, instructions or secrets",
		re: rx(`\b(reveal|show|print|display|output|repeat|tell|give|write|list|spell|leak|share|return)\b[\s,]+(?:(?:me|us|all|of|the|your|its|admin|user's|initial|original|hidden|secret|full|entire|exact|system|above|previous|first)\b[\s,]+){0,4}(system\s+prompts?|prompts?(\s+texts?)?|instructions|rules|passwords?|secrets?|api\s*keys?|private\s+keys?|seed\s+phrases?|credentials)\b`)},
	{ID: "PE-3", Category: CatExtraction, Weight: 45, Doc: "asks what is written above or before, or to print the prompt above",
		re: rx(`\b(what\s+(is|was)\s+written\s+(above|at\s+the\s+beginning)|before\s+the\s+text|(text|prompt|input)\s+above|(obige|obigen|gesamten\s+obigen)\s+(eingabeaufforderung|textes?|eingabe|ausführungen)|what\s+are\s+your\s+instructions|return\s+your\s+embeddings|when\s+were\s+you\s+trained)\b`)},
	{ID: "PE-2", Category: CatExtraction, Weight: 45, Doc: "German: zeige mir deine Anweisungen / dein Passwort",
		re: rx(`\b(zeig|zeige|zeigen|gib|nenne|verrate|schreibe?|wiederhole|ausgeben|drucke)\b[\s,]+(?:(?:mir|uns|sie|alle|deine|dein|ihre|ihr|den|die|das|geheime[ns]?|versteckte[ns]?|ganzen?|ursprüngliche[ns]?|vollständige[ns]?)\b[\s,]+){0,4}(prompt-?texte?|prompts?|anweisungen|instruktionen|passwort|geheimnis|regeln|systemprompt)`)},
	{ID: "RP-1", Category: CatRolePlay, Weight: 45, Doc: "assigns the model a new persona or unrestricted mode",
		re: rx(`\byou\s+are\s+(now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+(you|act|respond|answer)\b|\b(act|acting|behave)\s+as\s+(an?\s+|if\s+)?|\bpretend\s+(to\s+be|you\s+are|you\s+can|that)\b|\brole-?\s?play(ing)?\b|\bplay\s+the\s+(role|part)\b|\bstay\s+in\s+character\b|\bdo\s+anything\s+now\b|\bDAN\b|\bdeveloper\s+mode\b|\bjailbr(eak|oken)\b|\bno\s+(longer\s+)?(bound|restricted)\s+by\b|\bwithout\s+any\s+(restrictions|filters|limitations|censorship)\b|\bunfiltered\b|\bevil\s+(ai|bot|assistant|confidant)\b|\b(now|okay\.?)\s+you\s+are\s+\w|\bimagine\s+you\s+are\b|\bi\s+want\s+you\s+to\s+act\s+as\b|\blet'?s\s+play\s+a\s+game\b|\bspeak\s+like\s+a\b|\bin\s+the\s+style\s+of\s+a\b|\brepeat\s+after\s+me\b`)},
	{ID: "RP-2", Category: CatRolePlay, Weight: 40, Doc: "German: du bist jetzt / tu so als / ab jetzt",
		re: rx(`\b(du\s+bist\s+(jetzt|nun|ab\s+jetzt)|ab\s+(jetzt|sofort)\s+(bist|agierst|antwortest|handelst)|tu\s+so\s+als|stell\s+dir\s+vor,?\s+du\s+bist|spiel(e|st)?\s+die\s+rolle|nun\s+bist\s+du|verhalte\s+dich\s+wie|agiere\s+als|jetzt\s+bist\s+du|(als|wie)\s+[\w-]+(\s+[\w-]+){0,4}\s+(fungieren|auftreten|agieren)|im\s+stil\s+eines?)\b`)},
	{ID: "HT-1", Category: CatHidden, Weight: 20, Doc: "zero-width, bidirectional-override or tag characters hide text",
		re: regexp.MustCompile(`[\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{2064}\x{2066}-\x{2069}\x{FEFF}\x{E0000}-\x{E007F}]+`)},
	{ID: "HT-2", Category: CatHidden, Weight: 35, Doc: "markup hidden from a human reader (display:none, zero font, white text, comments with instructions)",
		re: rx(`<[^>]+style\s*=\s*["'][^"']*(display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0[;"'\s]|color\s*:\s*(#fff\b|#ffffff\b|white\b))[^>]*>|<!--[^>]{0,400}?\b(instruction|ignore|assistant|ai|model|system)\b[^>]{0,400}?-->`)},
	{ID: "EX-1", Category: CatExfil, Weight: 55, Doc: "markdown image or link whose URL carries query data (a zero-click exfiltration channel)",
		re: rx(`!\[[^\]]{0,200}\]\(\s*https?://[^)\s]+\?[^)\s]*=[^)\s]*\)|\[[^\]]{0,200}\]\(\s*https?://[^)\s]+\?[^)\s]*(\{|\$|%7B|<|data=|q=|secret|token|key|password|chat|conv|history|prompt)[^)\s]*\)`)},
	{ID: "EX-2", Category: CatExfil, Weight: 50, Doc: "asks to send the conversation, data or secrets to an address",
		re: rx(`\b(send|post|forward|upload|transmit|exfiltrate|email|e-mail|leak|append)\b[^.\n]{0,60}\b(conversation|chat\s+history|history|data|password|secret|token|api\s*key|private\s+key|seed\s+phrase|credentials|personal\s+information|the\s+above|everything)\b[^.\n]{0,60}\b(to|at|into)\b[^.\n]{0,20}(https?://|www\.|[\w.+-]+@[\w-]+\.\w)`)},
	{ID: "TL-1", Category: CatToolLure, Weight: 50, Doc: "tells the model to call a tool, run a command or move funds",
		re: rx(`\b(call|invoke|use|run|execute|trigger)\b\s+(?:(?:the|this|a|following)\s+){0,2}(tool|function|plugin|shell|terminal|command|code|script|api)\b[^.\n]{0,40}\b(now|immediately|with|to|:)|\b(transfer|send|move|withdraw)\b[^.\n]{0,40}\b(funds|usdc|eth|btc|crypto|tokens|money|wallet)\b|\b(rm\s+-rf|curl\s+[^\s]+\s*\|\s*(ba)?sh|wget\s+http)`)},
	{ID: "TL-2", Category: CatToolLure, Weight: 50, Doc: "forged tool-call syntax inside the data",
		re: rx(`<\s*/?\s*(tool_call|function_call|tool_use|invoke)\b|"(tool_calls|function_call)"\s*:|\bfunctions\.\w+\s*\(`)},
}

// Finding is one rule match.
type Finding struct {
	Rule     string `json:"rule"`
	Category string `json:"category"`
	Snippet  string `json:"snippet"`           // the matched text (at most 200 characters)
	Position Span   `json:"position"`          // where, in code points of the text as given
	Decoded  string `json:"decoded,omitempty"` // for an encoded run: what it decodes to
	Via      string `json:"via,omitempty"`     // base64, hex, rot13, or hidden (found once hidden characters were removed)
	Source   string `json:"source,omitempty"`  // "model" for a finding the model added
	Reason   string `json:"reason,omitempty"`  // the model's reason
	Weight   int    `json:"weight"`            // points added to the score
}

// Span is a half-open range of code points.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Report is the scan of one text.
type Report struct {
	Verdict   string    `json:"verdict"` // clean, suspicious or injection
	Score     int       `json:"score"`   // 0 to 100
	Findings  []Finding `json:"findings"`
	Sanitized string    `json:"sanitized"`
}

// Thresholds of the verdict.
const (
	SuspiciousAt = 30
	InjectionAt  = 60
)

// maxSnippet bounds a snippet.
const maxSnippet = 200

// Scan runs every rule over text and what its hidden and encoded parts reveal.
func Scan(text string) Report {
	idx := newIndex(text)
	var fs []Finding
	fs = append(fs, scanPlain(text, idx, "")...)
	// Text with its invisible characters removed: "ig\u200Bnore previous instructions".
	if visible, m := stripHidden(text); len(m) > 0 {
		for _, f := range scanPlain(visible, newIndex(visible), "hidden") {
			if f.Category == CatHidden {
				continue
			}
			f.Position = Span{m[f.Position.Start], m[f.Position.End-1] + 1}
			f.Snippet = clip(idx.slice(text, f.Position))
			fs = append(fs, f)
		}
	}
	fs = append(fs, scanEncoded(text, idx)...)
	return finish(text, idx, fs)
}

// Merge adds extra findings (the model's) to a report; nothing already found is removed.
func Merge(text string, r Report, extra []Finding) Report {
	return finish(text, newIndex(text), append(slices.Clone(r.Findings), extra...))
}

func finish(text string, idx index, fs []Finding) Report {
	fs = dedupe(fs)
	// A rule counts once, at its heaviest finding: repeating one phrase is not more evidence.
	best := map[string]int{}
	for _, f := range fs {
		k := f.Rule + "|" + f.Via
		best[k] = max(best[k], f.Weight)
	}
	score := 0
	for _, w := range best {
		score += w
	}
	// Several categories together are a stronger signal than one repeated.
	cats := map[string]bool{}
	for _, f := range fs {
		cats[f.Category] = true
	}
	if len(cats) >= 2 {
		score += 10
	}
	score = min(score, 100)
	verdict := "clean"
	switch {
	case score >= InjectionAt:
		verdict = "injection"
	case score >= SuspiciousAt:
		verdict = "suspicious"
	}
	if fs == nil {
		fs = []Finding{}
	}
	return Report{Verdict: verdict, Score: score, Findings: fs, Sanitized: sanitize(text, idx, fs)}
}

// Flagged reports whether a verdict counts as a detection (for precision and recall).
func (r Report) Flagged() bool { return r.Verdict != "clean" }

func scanPlain(text string, idx index, via string) []Finding {
	var fs []Finding
	for _, r := range Rules {
		for _, m := range r.re.FindAllStringIndex(text, 8) {
			sp := Span{idx.cp(m[0]), idx.cp(m[1])}
			fs = append(fs, Finding{Rule: r.ID, Category: r.Category, Snippet: clip(text[m[0]:m[1]]), Position: sp, Via: via, Weight: r.Weight})
		}
	}
	return fs
}

var (
	base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{24,}={0,2}|[A-Za-z0-9_-]{24,}={0,2}`)
	hexRun    = regexp.MustCompile(`\b(?:0x)?(?:[0-9a-fA-F]{2}[\s:]?){16,}\b`)
)

// scanEncoded decodes base64 and hex runs and the rot13 of the text, and rescans them with
// the rules that name an intent (override, extraction, role play, exfiltration, tool lure).
func scanEncoded(text string, idx index) []Finding {
	var fs []Finding
	rescan := func(decoded, via string, at Span, snippet string) {
		for _, f := range scanPlain(decoded, newIndex(decoded), via) {
			if f.Category == CatHidden {
				continue
			}
			fs = append(fs, Finding{Rule: "EP-1", Category: CatEncoded, Snippet: clip(snippet), Position: at,
				Decoded: clip(decoded), Via: via + ":" + f.Rule, Weight: 25 + f.Weight})
		}
	}
	for _, m := range base64Run.FindAllStringIndex(text, 16) {
		run := text[m[0]:m[1]]
		if d, ok := decodeBase64(run); ok {
			rescan(d, "base64", Span{idx.cp(m[0]), idx.cp(m[1])}, run)
		}
	}
	for _, m := range hexRun.FindAllStringIndex(text, 16) {
		run := text[m[0]:m[1]]
		clean := strings.NewReplacer(" ", "", ":", "", "\n", "", "\t", "", "0x", "").Replace(run)
		if b, err := hex.DecodeString(clean); err == nil && printable(string(b)) {
			rescan(string(b), "hex", Span{idx.cp(m[0]), idx.cp(m[1])}, run)
		}
	}
	// rot13 keeps positions, so a rot13 match points at its own span of the text. It is
	// rescanned only when it reads more like English than the text does (halves the cost).
	r13 := rot13(text)
	if englishness(r13) <= englishness(text) && !strings.Contains(strings.ToLower(text), "rot13") {
		return fs
	}
	for _, f := range scanPlain(r13, newIndex(r13), "") {
		if f.Category == CatHidden || f.Category == CatEncoded {
			continue
		}
		fs = append(fs, Finding{Rule: "EP-1", Category: CatEncoded, Snippet: clip(idx.slice(text, f.Position)), Position: f.Position,
			Decoded: f.Snippet, Via: "rot13:" + f.Rule, Weight: 25 + f.Weight})
	}
	return fs
}

// englishness counts very common English words, to tell plain text from rot13.
func englishness(s string) int {
	s = strings.ToLower(s)
	n := 0
	for _, w := range []string{" the ", " you ", " and ", " to ", " all ", " your ", " is "} {
		n += strings.Count(s, w)
	}
	return n
}

func decodeBase64(s string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && printable(string(b)) {
			return string(b), true
		}
	}
	return "", false
}

// printable is text a model would read: valid UTF-8, mostly letters and spaces.
func printable(s string) bool {
	if len(s) < 8 || !utf8.ValidString(s) {
		return false
	}
	good, spaces := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsPunct(r) || r == ' ' || r == '\n' {
			good++
		}
		if r == ' ' {
			spaces++
		}
	}
	n := utf8.RuneCountInString(s)
	return good*10 >= n*9 && spaces > 0
}

func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

// hidden is the character class HT-1 reports.
func hidden(r rune) bool {
	return (r >= 0x200B && r <= 0x200F) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2060 && r <= 0x2064) ||
		(r >= 0x2066 && r <= 0x2069) || r == 0xFEFF || (r >= 0xE0000 && r <= 0xE007F)
}

// stripHidden removes hidden characters; m maps each code point of the result to its
// position in the text.
func stripHidden(text string) (string, []int) {
	var b strings.Builder
	var m []int
	removed := false
	i := 0
	for _, r := range text {
		if hidden(r) {
			removed = true
		} else {
			b.WriteRune(r)
			m = append(m, i)
		}
		i++
	}
	if !removed {
		return text, nil
	}
	return b.String(), m
}

// dedupe keeps one finding per rule, position and route of discovery.
func dedupe(fs []Finding) []Finding {
	seen := map[string]bool{}
	out := fs[:0:0]
	for _, f := range fs {
		k := f.Rule + "|" + f.Via + "|" + f.Snippet + "|" + string(rune(f.Position.Start)) + string(rune(f.Position.End))
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return a.Position.Start - b.Position.Start })
	return out
}

// sanitize removes hidden characters and replaces each finding's span by a marker naming its
// rule; overlapping spans are merged.
func sanitize(text string, idx index, fs []Finding) string {
	spans := make([]Finding, 0, len(fs))
	for _, f := range fs {
		if f.Position.End > f.Position.Start {
			spans = append(spans, f)
		}
	}
	slices.SortFunc(spans, func(a, b Finding) int { return a.Position.Start - b.Position.Start })
	runes := []rune(text)
	var b strings.Builder
	pos := 0
	for i := 0; i < len(spans); {
		start, end, ids := spans[i].Position.Start, spans[i].Position.End, []string{spans[i].Rule}
		j := i + 1
		for ; j < len(spans) && spans[j].Position.Start < end; j++ {
			end = max(end, spans[j].Position.End)
			if !slices.Contains(ids, spans[j].Rule) {
				ids = append(ids, spans[j].Rule)
			}
		}
		if start >= pos {
			b.WriteString(visibleOnly(runes[pos:start]))
			b.WriteString("[removed:" + strings.Join(ids, ",") + "]")
			pos = end
		}
		i = j
	}
	if pos < len(runes) {
		b.WriteString(visibleOnly(runes[pos:]))
	}
	return b.String()
}

func visibleOnly(rs []rune) string {
	return strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, string(rs))
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxSnippet {
		return s
	}
	return string([]rune(s)[:maxSnippet]) + "…"
}

// index maps byte offsets of a text to code-point offsets.
type index struct{ cps []int }

func newIndex(s string) index {
	cps := make([]int, len(s)+1)
	n := 0
	for i := range s {
		for j := i; j < len(s) && (j == i || !utf8.RuneStart(s[j])); j++ {
			cps[j] = n
		}
		n++
	}
	cps[len(s)] = n
	return index{cps: cps}
}

func (x index) cp(byteOff int) int { return x.cps[byteOff] }

// slice returns the code points of sp from s.
func (x index) slice(s string, sp Span) string {
	r := []rune(s)
	if sp.Start < 0 || sp.End > len(r) || sp.Start > sp.End {
		return ""
	}
	return string(r[sp.Start:sp.End])
}
