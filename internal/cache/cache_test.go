package cache

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestGetSetTTLAndStats(t *testing.T) {
	c, err := New(Options{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.Get("a"); ok {
		t.Fatal("hit on empty cache")
	}
	if !c.SetSync("a", []byte("alpha"), time.Minute) {
		t.Fatal("set refused")
	}
	v, ok := c.Get("a")
	if !ok || string(v) != "alpha" {
		t.Fatalf("get = %q %v", v, ok)
	}
	if c.SetSync("nocache", []byte("x"), 0) {
		t.Fatal("ttl 0 stored")
	}
	c.SetSync("short", []byte("x"), 20*time.Millisecond)
	time.Sleep(1100 * time.Millisecond) // ristretto expires on a ~1s bucket tick; Get checks TTL itself
	if _, ok := c.Get("short"); ok {
		t.Fatal("expired entry returned")
	}
	c.Del("a")
	c.Get("a")
	st := c.Stats()
	if st.Hits != 1 || st.Misses != 3 || st.Sets != 2 || st.KeysAdded < 2 || st.HitRatio != 0.25 || st.MaxBytes != 1<<20 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestBoundedBySize(t *testing.T) {
	c, _ := New(Options{MaxBytes: 64 << 10, AvgBytes: 1 << 10})
	defer c.Close()
	val := []byte(strings.Repeat("v", 1000))
	for i := range 1000 {
		c.SetSync(fmt.Sprint("k", i), val, time.Hour)
	}
	if st := c.Stats(); st.BytesUsed > 64<<10 {
		t.Fatalf("holds %d bytes over a 64 KiB bound", st.BytesUsed)
	}
}

func TestKeyCanonical(t *testing.T) {
	a := Key("fr.kyb", map[string]any{"siren": "1", "depth": 2})
	b := Key("fr.kyb", map[string]any{"depth": 2, "siren": "1"})
	if a != b {
		t.Fatal("key depends on map order")
	}
	if Key("fr.kyb", map[string]any{"siren": "2"}) == a || Key("other", map[string]any{"siren": "1", "depth": 2}) == a {
		t.Fatal("distinct inputs share a key")
	}
	long := Key("x", map[string]any{"q": strings.Repeat("z", 1000)})
	if len(long) > 80 {
		t.Fatalf("long key not hashed: %d", len(long))
	}
}

// The server's Cache interface is satisfied.
var _ interface {
	Get(string) ([]byte, bool)
	Set(string, []byte, time.Duration)
} = (*Cache)(nil)
