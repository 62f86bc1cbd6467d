package family

import (
	"strings"
	"testing"
)

type chainSection struct{ RPC string }

// TestSection: a family reads its section as its owner's type; a section missing, or of
// another type, is an error naming it (the start stops) rather than a zero configuration.
func TestSection(t *testing.T) {
	c := Config{Sections: map[string]any{"chain": chainSection{RPC: "http://rpc"}, "dns": "not a section"}}
	if got, err := Section[chainSection](c, "chain"); err != nil || got.RPC != "http://rpc" {
		t.Errorf("chain = %+v, %v", got, err)
	}
	for _, key := range []string{"dns", "llm"} {
		if _, err := Section[chainSection](c, key); err == nil || !strings.Contains(err.Error(), "["+key+"]") {
			t.Errorf("%s: %v, want an error naming [%s]", key, err, key)
		}
	}
}
