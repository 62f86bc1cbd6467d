package dnsname

import "testing"

func TestToASCII(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "example.com", want: "example.com"},
		{in: "Example.COM.", want: "example.com"},
		{in: "café.fr", want: "xn--caf-dma.fr"},
		{in: "CAFÉ.fr", want: "xn--caf-dma.fr"},
		{in: "xn--caf-dma.fr", want: "xn--caf-dma.fr"},
		{in: "пример.рф", want: "xn--e1afmkfd.xn--p1ai"},
		{in: "bücher.example", want: "xn--bcher-kva.example"},
		{in: "straße.de", want: "xn--strae-oqa.de"}, // non-transitional: ß is kept, not mapped to ss
		{in: "a-b.co.uk", want: "a-b.co.uk"},
		{in: "localhost", bad: true},
		{in: "192.0.2.1", bad: true},
		{in: "-bad.com", bad: true},
		{in: "bad-.com", bad: true},
		{in: "under_score.com", bad: true},
		{in: "two..dots.com", bad: true},
		{in: "space here.com", bad: true},
		{in: "", bad: true},
		{in: "xn--zz.com", bad: true}, // not valid punycode
		{in: "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.com", bad: true},
		{in: "☃.com", want: "xn--n3h.com"}, // UTS 46 allows it; registries decide whether it exists
	}
	for _, tt := range tests {
		got, err := ToASCII(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ToASCII(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ToASCII(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestToUnicode(t *testing.T) {
	for in, want := range map[string]string{"xn--caf-dma.fr": "café.fr", "example.com": "example.com", "xn--zz.com": "xn--zz.com"} {
		if got := ToUnicode(in); got != want {
			t.Errorf("ToUnicode(%q) = %q, want %q", in, got, want)
		}
	}
}
