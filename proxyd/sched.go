package proxyd

import (
	"os"
	"runtime"
	"strings"
)

// proxyd runs its Go code on one processor (GOMAXPROCS=1), as squid runs on one thread. A
// tunnel's work is a few non-blocking system calls per burst, which one core carries at a home
// line's rate many times over, while with more processors every goroutine made ready wakes an
// idle thread, which spins looking for work and sleeps before stealing it: per tunnel set-up,
// 9 futex calls, 4.5 nanosleeps and 18 context switches on two processors (perf stat, `go run
// ./ops/bench/proxy -setup-only`). On one, with MonitorGODEBUG, the CPU per set-up fell from
// about 540 to 300 µs and the CPU per GiB in every row (docs/proxy.md).
//
// One processor is only right when nothing proxyd does holds it in a system call: the meters'
// fsyncs must go through AIO (journal.Options.RawIO), or a slow disk would stop every tunnel
// for as long as each fsync lasts. Where the kernel does not offer AIO fsync, proxyd keeps
// the runtime's default.

// MonitorGODEBUG is the GODEBUG setting proxyd's unit runs under: it keeps the runtime's
// monitor thread (sysmon) out of its deep sleep, which it enters whenever every processor is
// idle (with one processor, between any two steps of a set-up) and from which the next system
// call the scheduler sees (an accept, a shutdown) must wake it, after which it polls every
// 20 µs for a millisecond: 5 futex calls and 3 nanosleeps per set-up. Awake, it ticks at most
// every 10 ms, so an idle proxyd costs about 0.5% of a core (95 wake-ups a second on the 2-core
// VM of docs/proxy.md's figures, against 0.015% asleep). The setting's only other effect is
// a line of scheduler statistics on standard error every 2^31 ms (24.8 days) and after a fatal
// error.
const MonitorGODEBUG = "schedtrace=2147483647"

// asyncFsyncer is a store that writes to disk: it says whether its fsyncs leave the writer's
// processor free.
type asyncFsyncer interface{ AsyncFsync() bool }

// Scheduling is what TuneScheduler chose.
type Scheduling struct {
	Procs        int    // GOMAXPROCS now
	Why          string // why that many
	MonitorAwake bool   // MonitorGODEBUG is in effect
}

// TuneScheduler gives the process one processor unless st's fsyncs could hold it or GOMAXPROCS
// is set in the environment. It is the daemon's (and its benchmark's) to call, at start.
func TuneScheduler(st Store) Scheduling {
	s := Scheduling{MonitorAwake: strings.Contains(os.Getenv("GODEBUG"), MonitorGODEBUG)}
	af, onDisk := st.(asyncFsyncer)
	switch {
	case os.Getenv("GOMAXPROCS") != "":
		s.Why = "GOMAXPROCS is set in the environment"
	case onDisk && !af.AsyncFsync():
		s.Why = "the runtime's default: the kernel offers no AIO fsync, and a meter fsync would hold the only processor"
	case onDisk:
		runtime.GOMAXPROCS(1)
		s.Why = "one processor: the meters' fsyncs go through AIO"
	default:
		runtime.GOMAXPROCS(1)
		s.Why = "one processor: the meters are not written to disk"
	}
	s.Procs = runtime.GOMAXPROCS(0)
	return s
}
