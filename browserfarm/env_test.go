package browserfarm

import (
	"slices"
	"testing"
)

func TestChromiumEnv(t *testing.T) {
	cases := []struct {
		name       string
		environ    []string
		fontconfig string
		want       []string
	}{
		{"host locale and zone replaced",
			[]string{"PATH=/usr/bin", "TZ=America/Los_Angeles", "LANG=fr_FR.UTF-8", "LC_ALL=de_DE.UTF-8", "LC_TIME=en_US", "LANGUAGE=fr:en", "HOME=/root"}, "",
			[]string{"PATH=/usr/bin", "HOME=/root", "TZ=Europe/Paris", "LANG=C.UTF-8"}},
		{"fonts.conf set",
			[]string{"FONTCONFIG_FILE=/etc/other.conf", "PATH=/usr/bin"}, "/tmp/fonts.conf",
			[]string{"PATH=/usr/bin", "TZ=Europe/Paris", "LANG=C.UTF-8", "FONTCONFIG_FILE=/tmp/fonts.conf"}},
		{"the operator's FONTCONFIG_FILE kept when none is configured",
			[]string{"FONTCONFIG_FILE=/etc/other.conf"}, "",
			[]string{"FONTCONFIG_FILE=/etc/other.conf", "TZ=Europe/Paris", "LANG=C.UTF-8"}},
		{"a variable merely starting with LANG kept", []string{"LANGUAGE_MODEL=x", "LANG=C"}, "",
			[]string{"LANGUAGE_MODEL=x", "TZ=Europe/Paris", "LANG=C.UTF-8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := chromiumEnv(c.environ, c.fontconfig); !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
