package bodystore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "bodies"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPutGetRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	for _, tc := range []struct {
		name, inbox string
		body        []byte
	}{
		{"one byte", "in1", []byte("x")},
		{"json", "in1", []byte(`{"a":1}`)},
		{"full size", "0123456789abcdef0123456789abcdef", bytes.Repeat([]byte{0xfe}, 64<<10)},
		{"id with a slash stays inside", "../../etc", []byte("escape?")},
		{"id of dots", "..", []byte("dots")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := s.Put(ctx, tc.inbox, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if ref.Size != int64(len(tc.body)) || len(ref.SHA256) != 64 {
				t.Fatalf("ref = %+v", ref)
			}
			got, err := s.Get(ctx, tc.inbox, ref)
			if err != nil || !bytes.Equal(got, tc.body) {
				t.Fatalf("Get = %q, %v", got, err)
			}
			// Every file lives inside the store's directory.
			rel, err := filepath.Rel(s.Dir(), filepath.Join(s.Dir(), dirName(tc.inbox), ref.File))
			if err != nil || strings.HasPrefix(rel, "..") || strings.Count(rel, string(filepath.Separator)) != 1 {
				t.Fatalf("body stored at %s", rel)
			}
		})
	}
}

// A body changed on disk is reported, never returned.
func TestGetReportsDamage(t *testing.T) {
	ctx := context.Background()
	body := []byte(`{"event":"paid","amount":1234}`)
	for _, tc := range []struct {
		name   string
		damage func(path string) error
		want   error
	}{
		{"one byte flipped", func(p string) error {
			b, _ := os.ReadFile(p)
			b[3] ^= 1
			return os.WriteFile(p, b, 0o600)
		}, ErrCorrupt},
		{"truncated", func(p string) error { return os.Truncate(p, 5) }, ErrCorrupt},
		{"grown", func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString("tail")
			return err
		}, ErrCorrupt},
		{"deleted", os.Remove, ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			ref, err := s.Put(ctx, "in", body)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.damage(filepath.Join(s.Dir(), "in", ref.File)); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "in", ref)
			if !errors.Is(err, tc.want) || got != nil {
				t.Fatalf("Get = %q, %v; want %v", got, err, tc.want)
			}
			var ce *CorruptError
			if tc.want == ErrCorrupt && (!errors.As(err, &ce) || ce.Inbox != "in" || ce.WantSHA256 != ref.SHA256 || ce.GotSHA256 == ref.SHA256) {
				t.Fatalf("error %v does not describe the damage", err)
			}
		})
	}
}

func TestPruneKeepsWhatIsReferenced(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	keepRef, _ := s.Put(ctx, "live", []byte("kept"))
	orphan, _ := s.Put(ctx, "live", []byte("orphan of a live inbox"))
	gone, _ := s.Put(ctx, "swept", []byte("orphan of a swept inbox"))
	odd, _ := s.Put(ctx, "a/b", []byte("kept, odd id"))
	if err := os.WriteFile(filepath.Join(s.Dir(), "stray.tmp"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := map[[2]string]bool{{"live", keepRef.File}: true, {"a/b", odd.File}: true}
	p, err := s.Prune(ctx, func(inbox, file string) bool { return keep[[2]string{inbox, file}] })
	if err != nil {
		t.Fatal(err)
	}
	if p.Files != 3 || p.Bytes != int64(len("orphan of a live inbox")+len("orphan of a swept inbox")+1) {
		t.Fatalf("pruned %+v", p)
	}
	for _, tc := range []struct {
		inbox string
		ref   Ref
		want  error
	}{
		{"live", keepRef, nil},
		{"a/b", odd, nil},
		{"live", orphan, ErrMissing},
		{"swept", gone, ErrMissing},
	} {
		if _, err := s.Get(ctx, tc.inbox, tc.ref); !errors.Is(err, tc.want) && !(err == nil && tc.want == nil) {
			t.Fatalf("%s/%s: %v, want %v", tc.inbox, tc.ref.File, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "swept")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty directory of a swept inbox kept: %v", err)
	}
}

func TestRemove(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	a, _ := s.Put(ctx, "in", []byte("a"))
	b, _ := s.Put(ctx, "in", []byte("b"))
	c, _ := s.Put(ctx, "other", []byte("c"))
	if err := s.Remove(ctx, "in", a.File); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, "in", a.File); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if _, err := s.Get(ctx, "in", a); !errors.Is(err, ErrMissing) {
		t.Fatalf("removed body: %v", err)
	}
	if err := s.RemoveInbox(ctx, "in"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "in", b); !errors.Is(err, ErrMissing) {
		t.Fatalf("body of a removed inbox: %v", err)
	}
	if _, err := s.Get(ctx, "other", c); err != nil {
		t.Fatalf("another inbox lost its body: %v", err)
	}
	// The inbox can receive again after its directory went away.
	d, err := s.Put(ctx, "in", []byte("d"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "in", d); err != nil || string(got) != "d" {
		t.Fatalf("after RemoveInbox: %q %v", got, err)
	}
}
