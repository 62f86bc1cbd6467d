package update

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/testenv"
)

// The test releases: testdata/app linked with these versions and faults.
var testVersions = map[string]string{
	"1":             "",
	"2":             "",
	"3":             "",
	"9-exits":       "exit",
	"9-unhealthy":   "unhealthy",
	"9-crash-later": "crash-later",
}

// binaries maps a test version to its built binary (set by TestMain).
var binaries = map[string]string{}

func TestMain(m *testing.M) {
	if os.Getenv("UPDATE_HELPER") == "apply" {
		os.Exit(helperApply())
	}
	flag.Parse()
	if testenv.Skips(testenv.Builds) {
		os.Exit(m.Run()) // newBox skips every test that would run them
	}
	dir, err := os.MkdirTemp("", "update-test-bin-")
	if err != nil {
		panic(err)
	}
	for v, fault := range testVersions {
		out := filepath.Join(dir, "app_"+v)
		cmd := exec.Command("go", "build", "-o", out, "-ldflags",
			fmt.Sprintf("-X main.version=%s -X main.fault=%s", v, fault), "./testdata/app")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building the test app:", err)
			os.Exit(1)
		}
		binaries[v] = out
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// supervisor runs the binary `current` names like systemd runs a unit with
// Restart=on-failure: exec through the symlink at each start, restart after an exit, give up
// after a burst of restarts (StartLimitBurst), and count restarts since the last Restart.
type supervisor struct {
	current, addr, state string
	args                 []string // the unit's arguments; the test app's when nil
	env                  []string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	restarts int
	failed   bool
	stopping bool
}

const startLimitBurst = 5

func (s *supervisor) start() {
	args := s.args
	if args == nil {
		args = []string{"-addr", s.addr, "-state", s.state}
	}
	cmd := exec.Command(s.current, args...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = io.Discard
	done := make(chan struct{})
	if err := cmd.Start(); err != nil {
		s.failed = true
		close(done)
		s.cmd, s.done = nil, done
		return
	}
	s.cmd, s.done = cmd, done
	go func() {
		_ = cmd.Wait()
		close(done)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.stopping || s.cmd != cmd {
			return
		}
		s.restarts++
		if s.restarts >= startLimitBurst {
			s.failed = true
			return
		}
		time.AfterFunc(100*time.Millisecond, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.stopping && s.cmd == cmd {
				s.start()
			}
		})
	}()
}

func (s *supervisor) stop() {
	s.mu.Lock()
	s.stopping = true
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
}

func (s *supervisor) Restart(ctx context.Context) error {
	s.stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping, s.restarts, s.failed = false, 0, false
	s.start()
	return nil
}

func (s *supervisor) Check(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.failed:
		return fmt.Errorf("%w: app hit the restart limit", ErrUnitFailed)
	case s.restarts > 0:
		return fmt.Errorf("%w: app restarted %d times", ErrUnitFailed, s.restarts)
	}
	return nil
}

// box is an update root, a state directory and a supervised app, with a release key.
type box struct {
	t     *testing.T
	root  string
	state string
	addr  string
	keys  []PublicKey
	priv  ed25519.PrivateKey
	rels  string // where releases are signed
	sup   *supervisor
	store Store
}

func newBox(t *testing.T) *box {
	t.Helper()
	testenv.Needs(t, testenv.Builds)
	dir := t.TempDir()
	pub, priv, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	b := &box{t: t, root: filepath.Join(dir, "update"), state: filepath.Join(dir, "state"),
		addr: freeport.Addr(t), keys: []PublicKey{{Name: "test.pub", Key: pk}}, priv: sk,
		rels: filepath.Join(dir, "releases")}
	b.store = Store{Root: b.root}
	b.sup = &supervisor{current: filepath.Join(b.root, currentName), addr: b.addr, state: b.state}
	for _, d := range []string{b.root, b.state, b.rels} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(b.sup.stop)
	return b
}

// release signs test version v and returns its manifest's path.
func (b *box) release(v string) string {
	b.t.Helper()
	dir := filepath.Join(b.rels, v)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	bin := filepath.Join(dir, binaryPrefix+v)
	data, err := os.ReadFile(binaries[v])
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.t.Fatal(err)
	}
	m, err := Sign(bin, v, runtime.GOOS, runtime.GOARCH, b.priv)
	if err != nil {
		b.t.Fatal(err)
	}
	return m
}

// gate is quick for tests: the faults show within a second or two.
func (b *box) gate() Gate {
	return Gate{Services: b.sup, Health: HTTPHealth{URL: "http://" + b.addr + "/healthz"},
		Bound: 8 * time.Second, Hold: 1500 * time.Millisecond, Interval: 50 * time.Millisecond}
}

func (b *box) updater(log io.Writer) *Updater {
	if log == nil {
		log = io.Discard
	}
	return &Updater{Store: b.store, Gate: b.gate(), Log: slog.New(slog.NewJSONHandler(log, nil))}
}

// install puts version v in place as the factory install does: binary, current, running.
func (b *box) install(v string) {
	b.t.Helper()
	rel, err := Verify(b.release(v), "", b.keys)
	if err != nil {
		b.t.Fatal(err)
	}
	to, err := b.store.Install(rel)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := b.store.Flip(to); err != nil {
		b.t.Fatal(err)
	}
	if err := b.sup.Restart(context.Background()); err != nil {
		b.t.Fatal(err)
	}
	if err := b.gate().Wait(context.Background(), v, Baseline{}); err != nil {
		b.t.Fatal(err)
	}
}

// apply verifies and applies a release of version v.
func (b *box) apply(v string) (Outcome, error) {
	rel, err := Verify(b.release(v), "", b.keys)
	if err != nil {
		return Outcome{}, err
	}
	return b.updater(nil).Apply(context.Background(), rel)
}

// running is the version the app reports now.
func (b *box) running() string {
	r, err := HTTPHealth{URL: "http://" + b.addr + "/healthz"}.Check(context.Background())
	if err != nil {
		return "down: " + err.Error()
	}
	return r.Version
}

// waitRunning waits (5 s at most) for the app to report version v, as a unit that has just
// started; it returns what the app reports last.
func (b *box) waitRunning(v string) string {
	got := b.running()
	for end := time.Now().Add(5 * time.Second); got != v && time.Now().Before(end); got = b.running() {
		time.Sleep(50 * time.Millisecond)
	}
	return got
}

// records lists who wrote each state record, as the running app read them.
func (b *box) records() []string {
	b.t.Helper()
	resp, err := http.Get("http://" + b.addr + "/records")
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	var by []string
	if err := json.NewDecoder(resp.Body).Decode(&by); err != nil {
		b.t.Fatal(err)
	}
	return by
}

// currentVersion is the version `current` names.
func (b *box) currentVersion() string {
	b.t.Helper()
	c, err := b.store.Current()
	if err != nil {
		b.t.Fatal(err)
	}
	return b.store.VersionOf(c)
}

// helperApply is the updater as its own process, for the kill -9 tests: it runs the app of
// the current version under its own supervisor, then applies UPDATE_MANIFEST, logging each
// step as JSON on stderr.
func helperApply() int {
	root, state, addr := os.Getenv("UPDATE_ROOT"), os.Getenv("UPDATE_STATE"), os.Getenv("UPDATE_ADDR")
	keys, err := LoadPublicKeys(os.Getenv("UPDATE_KEYS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	sup := &supervisor{current: filepath.Join(root, currentName), addr: addr, state: state}
	defer sup.stop()
	_ = sup.Restart(context.Background())
	u := &Updater{Store: Store{Root: root}, Log: slog.New(slog.NewJSONHandler(os.Stderr, nil)),
		Gate: Gate{Services: sup, Health: HTTPHealth{URL: "http://" + addr + "/healthz"},
			Bound: 8 * time.Second, Hold: 1500 * time.Millisecond, Interval: 50 * time.Millisecond}}
	if err := u.Gate.Wait(context.Background(), os.Getenv("UPDATE_FROM"), Baseline{}); err != nil {
		fmt.Fprintln(os.Stderr, "the running version is not healthy:", err)
		return 3
	}
	rel, err := Verify(os.Getenv("UPDATE_MANIFEST"), "", keys)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	_, err = u.Apply(context.Background(), rel)
	var rb *RolledBackError
	if errors.As(err, &rb) {
		return 4
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
