package wire

import (
	"encoding/json"
	"testing"
)

func TestFloat(t *testing.T) {
	for _, c := range []struct {
		in    string
		v     float64
		valid bool
		err   bool
	}{
		{`1.77`, 1.77, true, false},
		{`"1.770"`, 1.77, true, false},
		{`"1,770"`, 1.77, true, false},
		{`null`, 0, false, false},
		{`""`, 0, false, false},
		{`"n/a"`, 0, false, true},
		{`true`, 0, false, true},
	} {
		var f Float
		err := json.Unmarshal([]byte(c.in), &f)
		if (err != nil) != c.err || f.V != c.v || f.Valid != c.valid {
			t.Errorf("%s: %+v, %v", c.in, f, err)
		}
	}
}

func TestInt(t *testing.T) {
	for _, c := range []struct {
		in    string
		v     int64
		valid bool
		err   bool
	}{
		{`1`, 1, true, false},
		{`"1"`, 1, true, false},
		{`"12.0"`, 12, true, false},
		{`null`, 0, false, false},
		{`"1.5"`, 0, false, true},
		{`{}`, 0, false, true},
	} {
		var n Int
		err := json.Unmarshal([]byte(c.in), &n)
		if (err != nil) != c.err || n.V != c.v || n.Valid != c.valid {
			t.Errorf("%s: %+v, %v", c.in, n, err)
		}
	}
}

func TestList(t *testing.T) {
	type area struct {
		Nom string `json:"nom"`
	}
	for _, c := range []struct {
		in   string
		noms []string
		err  bool
	}{
		{`[{"nom":"A"},{"nom":"B"}]`, []string{"A", "B"}, false},
		{`{"nom":"A"}`, []string{"A"}, false},
		{`null`, nil, false},
		{`[]`, nil, false},
		{`"A"`, nil, true},
	} {
		var l List[area]
		err := json.Unmarshal([]byte(c.in), &l)
		if (err != nil) != c.err || len(l) != len(c.noms) {
			t.Errorf("%s: %+v, %v", c.in, l, err)
			continue
		}
		for i := range l {
			if l[i].Nom != c.noms[i] {
				t.Errorf("%s: %+v", c.in, l)
			}
		}
	}
}

func TestMismatchNamesTheField(t *testing.T) {
	var v struct {
		Results []struct {
			Prix Float `json:"gazole_prix"`
		} `json:"results"`
	}
	err := json.Unmarshal([]byte(`{"results":[{"gazole_prix":"n/a"}]}`), &v)
	te, ok := err.(*json.UnmarshalTypeError)
	if !ok || te.Field != "results.gazole_prix" {
		t.Fatalf("err = %#v", err)
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{`200807`: "200807", `"FR-BIO-01"`: "FR-BIO-01", `null`: "", `12.5`: "12.5"} {
		var v Text
		if err := json.Unmarshal([]byte(in), &v); err != nil || string(v) != want {
			t.Errorf("%s: %q, %v", in, v, err)
		}
	}
	var v Text
	if err := json.Unmarshal([]byte(`{}`), &v); err == nil {
		t.Error("an object is not text")
	}
}
