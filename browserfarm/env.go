package browserfarm

import "strings"

// chromiumEnv is the environment Chromium runs with: the appliance's own, minus what would
// make rendering depend on the machine it runs on. Pages already get Europe/Paris and fr-FR
// through CDP and --lang; the process's time zone and locale are pinned the same way so that
// nothing outside a page's reach (workers, fontconfig's language default, date pickers) follows
// the host's TZ or LANG instead. fontconfig, when set, is the fonts.conf that decides which
// fonts exist for Chromium at all (FONTCONFIG_FILE).
func chromiumEnv(environ []string, fontconfig string) []string {
	out := make([]string, 0, len(environ)+4)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "TZ", name == "LANG", name == "LANGUAGE", strings.HasPrefix(name, "LC_"):
			continue
		case name == "FONTCONFIG_FILE" && fontconfig != "":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "TZ=Europe/Paris", "LANG=C.UTF-8")
	if fontconfig != "" {
		out = append(out, "FONTCONFIG_FILE="+fontconfig)
	}
	return out
}
