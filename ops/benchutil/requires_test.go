package benchutil

import "testing"

func TestRequiresSaysWhatIsMissingAndWhatMakesIt(t *testing.T) {
	for _, c := range []struct {
		what []string
		want string
	}{
		{[]string{"go"}, ""},
		{[]string{"peage-no-such-command"}, "peage-no-such-command not found: run make setup"},
		{[]string{"bin/peage-no-such-binary"}, "bin/peage-no-such-binary not found: run make build"},
		{[]string{"go", "settle/npm/peage-none"}, "settle/npm/peage-none not found: run make setup"},
	} {
		err := Requires(c.what...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("Requires(%q) = %q, want %q", c.what, got, c.want)
		}
	}
}
