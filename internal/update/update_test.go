package update

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUpdatePaths installs version 1, then applies releases in order; each step says what
// must run afterwards. Every version reads the state every other one wrote.
func TestUpdatePaths(t *testing.T) {
	type step struct {
		apply      string
		result     Result
		refused    bool   // refused before anything is written (a Rejection)
		wantRuns   string // version current names and the app reports afterwards
		wantReason string // part of the rollback reason
	}
	cases := []struct {
		name  string
		keep  int
		steps []step
		// installed versions left in versions/ at the end
		installed []string
	}{
		{name: "healthy update", steps: []step{{apply: "2", result: ResultInstalled, wantRuns: "2"}},
			installed: []string{"2", "1"}},
		{name: "new version exits at start", steps: []step{
			{apply: "2", result: ResultInstalled, wantRuns: "2"},
			{apply: "9-exits", result: ResultRolledBack, wantRuns: "2", wantReason: "restarted"},
		}, installed: []string{"9-exits", "2", "1"}},
		{name: "new version never healthy", steps: []step{
			{apply: "2", result: ResultInstalled, wantRuns: "2"},
			{apply: "9-unhealthy", result: ResultRolledBack, wantRuns: "2", wantReason: "not healthy within"},
		}, installed: []string{"9-unhealthy", "2", "1"}},
		{name: "new version crashes after answering", steps: []step{
			{apply: "9-crash-later", result: ResultRolledBack, wantRuns: "1", wantReason: "restarted"},
		}, installed: []string{"9-crash-later", "1"}},
		{name: "a rolled-back version is not installed again", steps: []step{
			{apply: "9-exits", result: ResultRolledBack, wantRuns: "1", wantReason: "restarted"},
			{apply: "9-exits", refused: true, wantRuns: "1"},
		}, installed: []string{"9-exits", "1"}},
		{name: "re-applying the running version does nothing", steps: []step{
			{apply: "2", result: ResultInstalled, wantRuns: "2"},
			{apply: "2", result: ResultNothing, wantRuns: "2"},
		}, installed: []string{"2", "1"}},
		{name: "old versions pruned beyond keep", keep: 2, steps: []step{
			{apply: "2", result: ResultInstalled, wantRuns: "2"},
			{apply: "3", result: ResultInstalled, wantRuns: "3"},
		}, installed: []string{"3", "2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBox(t)
			b.install("1")
			ran := []string{"1"}
			for _, st := range tc.steps {
				rel, err := Verify(b.release(st.apply), "", b.keys)
				if err != nil {
					t.Fatal(err)
				}
				u := b.updater(nil)
				u.Keep = tc.keep
				time.Sleep(10 * time.Millisecond) // distinct install times for pruning
				out, err := u.Apply(context.Background(), rel)
				var rej *Rejection
				var rb *RolledBackError
				switch {
				case st.refused:
					if !errors.As(err, &rej) {
						t.Fatalf("apply %s: want a refusal, got %v", st.apply, err)
					}
				case st.result == ResultRolledBack:
					if !errors.As(err, &rb) || out.Result != ResultRolledBack || !strings.Contains(out.Reason, st.wantReason) {
						t.Fatalf("apply %s: want rolled back (%q), got %+v, %v", st.apply, st.wantReason, out, err)
					}
					ran = append(ran, st.apply, st.wantRuns) // the broken one ran, then the previous again
				default:
					if err != nil || out.Result != st.result {
						t.Fatalf("apply %s: want %s, got %+v, %v", st.apply, st.result, out, err)
					}
				}
				if st.result == ResultInstalled {
					ran = append(ran, st.apply)
				}
				if got := b.currentVersion(); got != st.wantRuns {
					t.Fatalf("after %s: current names %q, want %q", st.apply, got, st.wantRuns)
				}
				if got := b.running(); got != st.wantRuns {
					t.Fatalf("after %s: the app reports %q, want %q", st.apply, got, st.wantRuns)
				}
				rec, err := b.store.Load()
				if err != nil || rec.Pending != nil {
					t.Fatalf("after %s: update.json %+v, %v: want no pending update", st.apply, rec, err)
				}
			}
			// The state survived every path: the running version read every record, in order,
			// including those a broken version wrote before it failed (each start writes one).
			var got []string
			for _, by := range b.records() {
				if len(got) == 0 || got[len(got)-1] != by {
					got = append(got, by)
				}
			}
			if !isSubsequence(ran, got) || got[len(got)-1] != ran[len(ran)-1] {
				t.Errorf("state records by %v, want the versions that ran %v in that order", got, ran)
			}
			var inst []string
			paths, err := b.store.Installed()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				inst = append(inst, b.store.VersionOf(p))
			}
			if !slices.Equal(inst, tc.installed) {
				t.Errorf("installed %v, want %v", inst, tc.installed)
			}
		})
	}
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestManualRollback goes back to the version that ran before, through the gate.
func TestManualRollback(t *testing.T) {
	b := newBox(t)
	b.install("1")
	if _, err := b.apply("2"); err != nil {
		t.Fatal(err)
	}
	out, err := b.updater(nil).Rollback(context.Background())
	if err != nil || out.Result != ResultInstalled || out.Version != "1" {
		t.Fatalf("rollback: %+v, %v", out, err)
	}
	if got := b.running(); got != "1" {
		t.Fatalf("after rollback the app reports %q", got)
	}
}

// tree is every path under dir with its content's hash (symlinks by target).
func tree(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				target, err := os.Readlink(p)
				m[p] = "-> " + target
				return err
			case d.IsDir():
				m[p] = "dir"
			default:
				data, err := os.ReadFile(p)
				sum := sha256.Sum256(data)
				m[p] = hex.EncodeToString(sum[:])
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestRefusedBeforeAnythingIsWritten: every tampering is refused by the same path the
// command takes (Verify, then Apply), and the update root and state are left as they were.
func TestRefusedBeforeAnythingIsWritten(t *testing.T) {
	_, otherPriv, _ := ed25519.GenerateKey(nil)
	resign := func(t *testing.T, manifest string, key ed25519.PrivateKey) {
		body, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, body))
		if err := os.WriteFile(manifest+".sig", []byte(sig), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	editManifest := func(t *testing.T, manifest string, edit func(*Manifest)) {
		var m Manifest
		body, _ := os.ReadFile(manifest)
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		edit(&m)
		body, _ = json.Marshal(m)
		if err := os.WriteFile(manifest, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// resigned edits the manifest and signs it again with the box's own key: a release that
	// verifies, refused for what it says.
	resigned := func(edit func(*Manifest)) func(*testing.T, *box, string) {
		return func(t *testing.T, b *box, m string) { editManifest(t, m, edit); resign(t, m, b.priv) }
	}
	cases := []struct {
		name   string
		tamper func(t *testing.T, b *box, manifest string)
		want   string
	}{
		{"binary changed after signing", func(t *testing.T, b *box, m string) {
			f, _ := os.OpenFile(strings.TrimSuffix(m, ".manifest"), os.O_WRONLY|os.O_APPEND, 0)
			f.Write([]byte{0})
			f.Close()
		}, "bytes, the manifest says"},
		{"binary replaced by another of the same size", func(t *testing.T, b *box, m string) {
			bin := strings.TrimSuffix(m, ".manifest")
			data, _ := os.ReadFile(bin)
			data[len(data)/2] ^= 0xff
			os.WriteFile(bin, data, 0o755)
		}, "does not match the manifest"},
		{"manifest edited after signing", func(t *testing.T, b *box, m string) {
			editManifest(t, m, func(m *Manifest) { m.Version = "3" })
		}, "signature does not verify"},
		{"signed by an untrusted key", func(t *testing.T, b *box, m string) { resign(t, m, otherPriv) }, "signature does not verify"},
		{"signature missing", func(t *testing.T, b *box, m string) { os.Remove(m + ".sig") }, "no signature"},
		{"signature garbled", func(t *testing.T, b *box, m string) { os.WriteFile(m+".sig", []byte("bm90IGEgc2ln"), 0o644) }, "signature is not"},
		{"release for another architecture", resigned(func(m *Manifest) { m.Arch = "riscv64" }), "release is for linux/riscv64"},
		{"version naming a path", resigned(func(m *Manifest) { m.Version = "../../bin/x" }), "not a plain version string"},
		{"binary name naming a path", resigned(func(m *Manifest) { m.File = "../1/appliance_1" }), "not a plain file name"},
		{"another product's manifest", resigned(func(m *Manifest) { m.Product = "other" }), "manifest is for"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBox(t)
			b.install("1")
			before := tree(t, b.root, b.state)
			m := b.release("2")
			tc.tamper(t, b, m)
			rel, err := Verify(m, "", b.keys)
			if err == nil {
				_, err = b.updater(nil).Apply(context.Background(), rel)
			}
			var rej *Rejection
			if !errors.As(err, &rej) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.want)
			}
			after := tree(t, b.root, b.state)
			for p, h := range after {
				if before[p] != h {
					t.Errorf("%s changed (%q → %q)", p, before[p], h)
				}
			}
			if len(after) != len(before) {
				t.Errorf("files before %d, after %d", len(before), len(after))
			}
			if got := b.running(); got != "1" {
				t.Errorf("the app reports %q", got)
			}
		})
	}
}

// TestBinarySwappedAfterVerify: the copy is hashed again, so a binary changed between
// Verify and Install is refused and leaves no file in versions/.
func TestBinarySwappedAfterVerify(t *testing.T) {
	b := newBox(t)
	b.install("1")
	m := b.release("2")
	rel, err := Verify(m, "", b.keys)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := os.ReadFile(binaries["3"])
	if err := os.WriteFile(rel.Binary, other, 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, b.root)
	_, err = b.updater(nil).Apply(context.Background(), rel)
	var rej *Rejection
	if !errors.As(err, &rej) {
		t.Fatalf("got %v, want a refusal", err)
	}
	after := tree(t, b.root)
	delete(after, filepath.Join(b.root, "lock")) // the lock file is the one thing Apply opens first
	delete(before, filepath.Join(b.root, "lock"))
	if len(after) != len(before) {
		t.Errorf("update root changed: %d entries before, %d after", len(before), len(after))
	}
	if got := b.currentVersion(); got != "1" {
		t.Errorf("current names %q", got)
	}
}

// TestKill9AtEachStep kills the updater process with SIGKILL as it logs each step, then
// checks that `current` names a whole verified binary, and that the recovery (what the gate
// unit runs at boot) ends on a healthy version with no update pending: the new one when it is
// healthy and was flipped to, the old one otherwise.
func TestKill9AtEachStep(t *testing.T) {
	healthySteps := []string{StepInstall, StepRecord, StepFlip, StepRestart, StepGate, StepConfirm, StepPrune}
	brokenSteps := []string{StepInstall, StepRecord, StepFlip, StepRestart, StepGate, StepRollback}
	type tcase struct{ target, step string }
	var cases []tcase
	for _, s := range healthySteps {
		cases = append(cases, tcase{"2", s})
	}
	for _, s := range brokenSteps {
		cases = append(cases, tcase{"9-exits", s})
	}
	for _, tc := range cases {
		t.Run(tc.target+"/"+tc.step, func(t *testing.T) {
			b := newBox(t)
			b.install("1")
			b.sup.stop() // the helper process runs the box now
			keyDir := t.TempDir()
			pub := "peage-update-ed25519-pub " + base64.StdEncoding.EncodeToString(b.keys[0].Key) + "\n"
			if err := os.WriteFile(filepath.Join(keyDir, "test.pub"), []byte(pub), 0o644); err != nil {
				t.Fatal(err)
			}
			manifest := b.release(tc.target)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "UPDATE_HELPER=apply", "UPDATE_ROOT="+b.root, "UPDATE_STATE="+b.state,
				"UPDATE_ADDR="+b.addr, "UPDATE_KEYS="+keyDir, "UPDATE_MANIFEST="+manifest, "UPDATE_FROM=1")
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = pw
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			killed := false
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				var line struct{ Step string }
				if json.Unmarshal(sc.Bytes(), &line) == nil && line.Step == tc.step {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					break
				}
			}
			_ = cmd.Wait()
			if !killed {
				t.Fatalf("the updater never logged step %s", tc.step)
			}
			// Whatever the step, current names a complete binary that verifies.
			cur, err := b.store.Current()
			if err != nil {
				t.Fatal(err)
			}
			v := b.store.VersionOf(cur)
			if v != "1" && v != tc.target {
				t.Fatalf("current names %q", cur)
			}
			if _, err := Verify(b.release(v), cur, b.keys); err != nil {
				t.Fatalf("current names a binary that does not verify: %v", err)
			}
			// Boot: the units start from current, then the gate unit recovers.
			time.Sleep(200 * time.Millisecond) // the helper's app dies with it (Pdeathsig)
			if err := b.sup.Restart(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, err = b.updater(nil).Recover(context.Background())
			var rb *RolledBackError
			if err != nil && !errors.As(err, &rb) {
				t.Fatalf("recover: %v", err)
			}
			want := "1"
			if tc.target == "2" && v == "2" {
				want = "2"
			}
			if got := b.currentVersion(); got != want {
				t.Errorf("after recovery current names %q, want %q", got, want)
			}
			if got := b.waitRunning(want); got != want {
				t.Errorf("after recovery the app reports %q, want %q", got, want)
			}
			rec, err := b.store.Load()
			if err != nil || rec.Pending != nil {
				t.Errorf("after recovery update.json %+v, %v", rec, err)
			}
			entries, _ := os.ReadDir(b.store.versionsPath())
			for _, e := range entries {
				if strings.Contains(e.Name(), tempMark) {
					t.Errorf("temporary file %s left after recovery", e.Name())
				}
			}
		})
	}
}

// TestFirstInstallWithoutCurrent: a root with no `current` yet (the image's tmpfiles link is
// missing) takes a healthy release; a broken one stays, since there is nothing to go back to,
// but is remembered as bad and leaves no update pending.
func TestFirstInstallWithoutCurrent(t *testing.T) {
	cases := []struct {
		version string
		result  Result
	}{{"2", ResultInstalled}, {"9-exits", ResultRolledBack}}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			b := newBox(t)
			out, err := b.apply(tc.version)
			if out.Result != tc.result {
				t.Fatalf("apply: %+v, %v", out, err)
			}
			if got := b.currentVersion(); got != tc.version {
				t.Errorf("current names %q", got)
			}
			rec, err := b.store.Load()
			if err != nil || rec.Pending != nil {
				t.Fatalf("update.json %+v, %v", rec, err)
			}
			if bad := slices.Contains(rec.Bad, tc.version); bad != (tc.result == ResultRolledBack) {
				t.Errorf("bad list %v", rec.Bad)
			}
		})
	}
}
