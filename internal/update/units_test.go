package update

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// showOutput has the shape of `systemctl show --property=...` for two units (KEY=VALUE lines,
// one block per unit, an empty line between); written by hand, shuffled within each block
// because systemctl prints properties in its own order, not the order asked.
const showOutput = `NRestarts=0
Result=success
Id=peage-api.service
ActiveState=active
SubState=running

NRestarts=3
Result=exit-code
Id=peage-settle.service
ActiveState=activating
SubState=auto-restart
`

func TestParseShow(t *testing.T) {
	got := parseShow([]byte(showOutput))
	want := []unitState{
		{ID: "peage-api.service", ActiveState: "active", SubState: "running", Result: "success"},
		{ID: "peage-settle.service", ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", NRestarts: 3},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

func TestJudgeUnits(t *testing.T) {
	active := unitState{ID: "a", ActiveState: "active", SubState: "running"}
	cases := []struct {
		name       string
		states     []unitState
		base       map[string]int
		wantFailed bool
		wantErr    string
	}{
		{"all active", []unitState{active}, map[string]int{"a": 0}, false, ""},
		{"restarted before the update does not count", []unitState{{ID: "a", ActiveState: "active", NRestarts: 2}}, map[string]int{"a": 2}, false, ""},
		{"starting is not yet", []unitState{{ID: "a", ActiveState: "activating", SubState: "start"}}, map[string]int{"a": 0}, false, "activating/start"},
		{"restarted since the update", []unitState{{ID: "a", ActiveState: "activating", SubState: "auto-restart", NRestarts: 1}}, map[string]int{"a": 0}, true, "restarted 1 times"},
		{"failed", []unitState{active, {ID: "b", ActiveState: "failed", Result: "start-limit-hit"}}, map[string]int{}, true, "start-limit-hit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := judgeUnits(tc.states, tc.base)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, ErrUnitFailed) != tc.wantFailed {
				t.Fatalf("got %v, want %q (failed=%v)", err, tc.wantErr, tc.wantFailed)
			}
		})
	}
}

// TestSystemdRunsSystemctl runs the Systemd services against a systemctl stand-in script that
// records its arguments and prints canned show output, to check the commands issued.
func TestSystemdRunsSystemctl(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "systemctl")
	log := filepath.Join(dir, "calls")
	body := "#!/bin/sh\necho \"$@\" >> " + log + "\ncase \"$1\" in show) cat " + filepath.Join(dir, "show") + ";; esac\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	show := filepath.Join(dir, "show")
	os.WriteFile(show, []byte("Id=peage-api.service\nActiveState=active\nSubState=running\nNRestarts=4\nResult=success\n"), 0o644)
	s := &Systemd{Target: "peage.target", Units: []string{"peage-api.service"}, Systemctl: script}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("check right after restart: %v", err)
	}
	os.WriteFile(show, []byte("Id=peage-api.service\nActiveState=active\nSubState=running\nNRestarts=5\nResult=success\n"), 0o644)
	if err := s.Check(context.Background()); !errors.Is(err, ErrUnitFailed) {
		t.Fatalf("check after a restart by systemd: %v", err)
	}
	calls, _ := os.ReadFile(log)
	want := "restart peage.target\n" +
		"show --property=Id,ActiveState,SubState,NRestarts,Result -- peage-api.service\n" +
		"show --property=Id,ActiveState,SubState,NRestarts,Result -- peage-api.service\n" +
		"show --property=Id,ActiveState,SubState,NRestarts,Result -- peage-api.service\n"
	if string(calls) != want {
		t.Fatalf("systemctl calls:\n%s\nwant:\n%s", calls, want)
	}
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"v0.10.0", "v0.9.3", 1},
		{"v1.2.3", "v1.2.3", 0},
		{"v1.2", "v1.2.1", -1},
		{"2", "10", -1},
		{"v1.2.3-4-gabc", "v1.2.3", 1},
		{"v01.2", "v1.2", 0},
	}
	for _, tc := range cases {
		got := CompareVersions(tc.a, tc.b)
		if (got > 0) != (tc.want > 0) || (got < 0) != (tc.want < 0) {
			t.Errorf("CompareVersions(%q, %q) = %d, want sign of %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestFetchOverHTTP publishes a release channel over HTTP: the manifest is verified before
// the binary is asked for, and the downloaded binary is checked against it.
func TestFetchOverHTTP(t *testing.T) {
	cases := []struct {
		name       string
		tamper     func(dir string)
		wantErr    string
		wantBinary bool // whether the binary was requested
	}{
		{"good release", func(string) {}, "", true},
		{"forged manifest: binary never fetched", func(dir string) {
			os.WriteFile(filepath.Join(dir, LatestName()+".sig"), []byte(strings.Repeat("A", 86)+"==\n"), 0o644)
		}, "signature does not verify", false},
		{"binary swapped on the server", func(dir string) {
			p := filepath.Join(dir, binaryPrefix+"2")
			data, _ := os.ReadFile(p)
			data[100] ^= 1
			os.WriteFile(p, data, 0o755)
		}, "does not match the manifest", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBox(t)
			m := b.release("2")
			dir := filepath.Dir(m)
			os.Rename(m, filepath.Join(dir, LatestName()))
			os.Rename(m+".sig", filepath.Join(dir, LatestName()+".sig"))
			tc.tamper(dir)
			var mu sync.Mutex
			var asked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				asked = append(asked, r.URL.Path)
				mu.Unlock()
				http.FileServer(http.Dir(dir)).ServeHTTP(w, r)
			}))
			defer srv.Close()
			rel, err := Fetch(context.Background(), srv.URL+"/", b.keys, b.store, srv.Client())
			binAsked := slices.Contains(asked, "/"+binaryPrefix+"2")
			if binAsked != tc.wantBinary {
				t.Errorf("binary requested: %v, want %v (requests %v)", binAsked, tc.wantBinary, asked)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				entries, _ := os.ReadDir(b.root)
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), "download") {
						t.Errorf("download %s left behind", e.Name())
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rel.Manifest.Version != "2" || !strings.HasPrefix(filepath.Base(rel.Binary), "download"+tempMark) || !rel.Download {
				t.Fatalf("release %+v", rel)
			}
			if err := sameContent(rel.Binary, &rel.Manifest); err != nil {
				t.Fatal(err)
			}
			// The same channel as a directory: the binary beside the manifest, never removed.
			if local, err := Fetch(context.Background(), dir, b.keys, b.store, nil); err != nil || local.Download || filepath.Dir(local.Binary) != dir {
				t.Errorf("from the directory: %+v, %v; want the binary beside the manifest, not a download", local, err)
			}
		})
	}
}
