package disposable

import "testing"

func TestMatch(t *testing.T) {
	tests := map[string]string{
		"mailinator.com":           "mailinator.com",
		"eu.mailinator.com":        "mailinator.com",
		"yopmail.com":              "yopmail.com",
		"0-mailer.dynv6.net":       "0-mailer.dynv6.net",
		"other.dynv6.net":          "", // a listed subdomain does not list its siblings
		"gmail.com":                "",
		"corp.test":                "",
		"com":                      "",
		"mailinator.com.":          "mailinator.com",
		"mailinator.com.corp.test": "",
		"guerrillamail.com":        "guerrillamail.com",
		"sub.sub.10minutemail.com": "10minutemail.com",
	}
	for in, want := range tests {
		if got := Match(in); got != want {
			t.Errorf("Match(%q) = %q, want %q", in, got, want)
		}
	}
	if Len() < 5000 {
		t.Errorf("the embedded list holds %d domains; it was not generated", Len())
	}
}
