package wire

import (
	"fmt"
	"testing"
)

func TestHeader(t *testing.T) {
	h, err := NewHeader([]string{"\ufeffa", "b"}, "T", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get([]string{" x ", "y"}, "a"); got != "x" {
		t.Errorf("Get a = %q, want x (BOM dropped, value trimmed)", got)
	}
	if got := h.Get([]string{"x"}, "b"); got != "" {
		t.Errorf("Get of a short record = %q, want empty", got)
	}
	_, err = NewHeader([]string{"a"}, "T", "a", "c")
	if err == nil || err.Error() != "T header lacks c" {
		t.Fatalf("missing column: err = %v", err)
	}
	if f := MissingField(fmt.Errorf("wrapped: %w", err)); f != "c" {
		t.Errorf("MissingField = %q, want c", f)
	}
}
