package proxyd

import (
	"runtime"
	"testing"
)

// diskStore is a store on disk whose fsyncs hold the processor or not.
type diskStore struct {
	*MemStore
	async bool
}

func (d diskStore) AsyncFsync() bool { return d.async }

// TestTuneScheduler: one processor unless an fsync could hold it or the environment says.
func TestTuneScheduler(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		name  string
		st    Store
		env   string
		procs int // 0: left as it was
	}{
		{"memory", NewMemStore(), "", 1},
		{"disk, AIO fsync", diskStore{NewMemStore(), true}, "", 1},
		{"disk, blocking fsync", diskStore{NewMemStore(), false}, "", 0},
		{"environment", NewMemStore(), "3", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", c.env)
			runtime.GOMAXPROCS(4)
			want := c.procs
			if want == 0 {
				want = 4
			}
			if s := TuneScheduler(c.st); s.Procs != want || runtime.GOMAXPROCS(0) != want || s.Why == "" {
				t.Fatalf("%+v, GOMAXPROCS %d; want %d and a reason", s, runtime.GOMAXPROCS(0), want)
			}
		})
	}
	// What was chosen is in the stats the operator reads.
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(3)
	e := newEnv(t, nil)
	if got := TuneScheduler(e.store).Procs; got != 1 || e.s.Stats().Procs != 1 {
		t.Fatalf("tuned to %d, stats say %d; want 1", got, e.s.Stats().Procs)
	}
	t.Setenv("GODEBUG", "x=1,"+MonitorGODEBUG)
	if !TuneScheduler(NewMemStore()).MonitorAwake {
		t.Fatal("GODEBUG holds " + MonitorGODEBUG + " but MonitorAwake is false")
	}
	t.Setenv("GODEBUG", "")
	if TuneScheduler(NewMemStore()).MonitorAwake {
		t.Fatal("MonitorAwake without GODEBUG")
	}
}
