package state

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/testenv"
)

// The crash test runs a writer in a child process (this test binary, re-executed with
// STATE_CRASH_DIR set), kill -9s it at a random moment, reopens the state in the parent and
// checks that every write the child acknowledged (printed an "ack" line for after the accessor
// returned) is there, intact, and that nothing is corrupt. Several rounds accumulate in one
// directory, each killed at a different point (in the middle of appends, of compactions...).

const crashEnv = "STATE_CRASH_DIR"

func crashBody(inbox string, k int) []byte {
	b := []byte(fmt.Sprintf("%s#%d;", inbox, k))
	n := 64 + k*37%2000
	if k%17 == 0 {
		n = InboxMaxBodyBytes - len(b) // a full-size body now and then
	}
	return append(b, bytes.Repeat([]byte{byte('a' + k%26)}, n)...)
}

func crashHTML(id string) string { return "<p>" + id + strings.Repeat("x", len(id)*50) + "</p>" }

// TestCrashChild is the child's body; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("crash-test child only")
	}
	round := os.Getenv("STATE_CRASH_ROUND")
	s, err := Open(dir, Options{Name: "crash", Sync: journal.SyncAlways, NoBackground: true})
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(3)
	}
	var outMu sync.Mutex
	ack := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...) + "\n"
		outMu.Lock()
		os.Stdout.WriteString(line) // one write per line
		outMu.Unlock()
	}
	now := time.Now()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() { // deliveries; several writers share each inbox
			defer wg.Done()
			for n := 0; ; n++ {
				id := fmt.Sprintf("r%s-i%d-%d", round, w/2, n)
				if w%2 == 0 {
					if err := s.CreateInbox(Inbox{ID: id, Key: "k", CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
						panic(err)
					}
					ack("inbox %s", id)
				} else {
					for { // wait for the sibling to create it
						if _, ok := s.Inbox(id); ok {
							break
						}
						time.Sleep(100 * time.Microsecond)
					}
				}
				for k := w % 2; ; k += 2 {
					ev, err := s.AddEvent(context.Background(), Event{Inbox: id, Method: "POST", Kind: "text", Body: crashBody(id, k)})
					if err == ErrFull {
						break
					}
					if err != nil {
						panic(err)
					}
					ack("event %s %d %d", id, ev.Seq, k)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // pages
		defer wg.Done()
		for n := 0; ; n++ {
			id := fmt.Sprintf("r%s-p%d", round, n)
			if err := s.PutPage(Page{ID: id, Title: id, HTML: crashHTML(id), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				panic(err)
			}
			ack("page %s", id)
		}
	}()
	wg.Add(1)
	go func() { // a proxy meter
		defer wg.Done()
		key := "r" + round + "-pk"
		if _, err := s.CreatePackage(Package{Key: key, GB: 1}); err != nil {
			panic(err)
		}
		ack("package %s", key)
		for {
			p, err := s.AddUsage(key, 4096)
			if err != nil {
				panic(err)
			}
			ack("usage %s %d", key, p.BytesUsed)
		}
	}()
	wg.Add(1)
	go func() { // compactions, so kills also land in the middle of one
		defer wg.Done()
		for {
			time.Sleep(time.Duration(5+rand.IntN(30)) * time.Millisecond)
			if err := s.Compact(); err != nil {
				panic(err)
			}
			ack("compact")
		}
	}()
	wg.Wait()
}

type acked struct {
	inboxes  map[string]bool
	events   map[string]map[uint64]int // inbox → seq → k
	pages    map[string]bool
	packages map[string]bool
	usage    map[string]int64 // highest acknowledged meter
	compacts int
}

func TestCrashKill9(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	testenv.Needs(t, testenv.Processes)
	dir := t.TempDir()
	a := acked{inboxes: map[string]bool{}, events: map[string]map[uint64]int{}, pages: map[string]bool{},
		packages: map[string]bool{}, usage: map[string]int64{}}
	rounds := 8
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir, "STATE_CRASH_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []string)
		first := make(chan struct{})
		go func() {
			var got []string
			r := bufio.NewReader(out)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					break // a final line without its newline was not fully acknowledged
				}
				if len(got) == 0 {
					close(first)
				}
				got = append(got, strings.TrimSuffix(line, "\n"))
			}
			lines <- got
		}()
		// Kill at a random moment once the child is writing (its start-up replay takes longer
		// as the rounds accumulate).
		select {
		case <-first:
		case <-time.After(20 * time.Second):
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		got := <-lines
		cmd.Wait()
		n := 0
		for _, l := range got {
			f := strings.Fields(l)
			switch f[0] {
			case "inbox":
				a.inboxes[f[1]] = true
			case "event":
				seq, _ := strconv.ParseUint(f[2], 10, 64)
				k, _ := strconv.Atoi(f[3])
				if a.events[f[1]] == nil {
					a.events[f[1]] = map[uint64]int{}
				}
				a.events[f[1]][seq] = k
				n++
			case "page":
				a.pages[f[1]] = true
			case "package":
				a.packages[f[1]] = true
			case "usage":
				u, _ := strconv.ParseInt(f[2], 10, 64)
				a.usage[f[1]] = max(a.usage[f[1]], u)
			case "compact":
				a.compacts++
			default:
				t.Fatalf("round %d: child said %q; stderr: %s", round, l, stderr.String())
			}
		}
		if len(got) == 0 {
			t.Fatalf("round %d: child acknowledged nothing; stderr: %s", round, stderr.String())
		}
		verifyCrash(t, dir, &a, round)
		t.Logf("round %d: %d acks (%d events), killed; all acknowledged writes present", round, len(got), n)
	}
	if a.compacts == 0 {
		t.Log("note: no compaction completed in any round")
	}
}

func verifyCrash(t *testing.T, dir string, a *acked, round int) {
	t.Helper()
	s, err := Open(dir, Options{Name: "crash", Logger: quiet(), NoBackground: true})
	if err != nil {
		t.Fatalf("round %d: reopen refused: %v", round, err)
	}
	defer s.Close()
	if st := s.Stats(); st.Skipped != 0 {
		t.Fatalf("round %d: %d journal records unreadable", round, st.Skipped)
	}
	for id := range a.inboxes {
		if _, ok := s.Inbox(id); !ok {
			t.Fatalf("round %d: acknowledged inbox %s lost", round, id)
		}
	}
	for id, evs := range a.events {
		in, stored, err := s.Events(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatalf("round %d: inbox %s: %v", round, id, err)
		}
		// Stored events are dense 1..n, consistent with the inbox row, and intact.
		if in.Events != len(stored) || in.LastSeq != uint64(len(stored)) || len(stored) > InboxMaxEvents {
			t.Fatalf("round %d: inbox %s row %+v vs %d events", round, id, in, len(stored))
		}
		var bytesSum int64
		for i, ev := range stored {
			if ev.Seq != uint64(i+1) {
				t.Fatalf("round %d: inbox %s: gap at %d (seq %d)", round, id, i+1, ev.Seq)
			}
			var k int
			if _, err := fmt.Sscanf(string(ev.Body[len(id)+1:]), "%d;", &k); err != nil || !bytes.Equal(ev.Body, crashBody(id, k)) {
				t.Fatalf("round %d: inbox %s event %d corrupt", round, id, ev.Seq)
			}
			if want, ok := evs[ev.Seq]; ok && want != k {
				t.Fatalf("round %d: inbox %s seq %d holds delivery %d, acknowledged %d", round, id, ev.Seq, k, want)
			}
			bytesSum += int64(len(ev.Body))
		}
		if in.Bytes != bytesSum {
			t.Fatalf("round %d: inbox %s bytes %d, events sum %d", round, id, in.Bytes, bytesSum)
		}
		for seq := range evs {
			if seq > uint64(len(stored)) {
				t.Fatalf("round %d: acknowledged event %s/%d lost (have %d)", round, id, seq, len(stored))
			}
		}
	}
	for id := range a.pages {
		p, ok := s.Page(id)
		if !ok || p.HTML != crashHTML(id) || p.Bytes != len(p.HTML) {
			t.Fatalf("round %d: acknowledged page %s lost or corrupt", round, id)
		}
	}
	for key := range a.packages {
		p, ok := s.Package(key)
		if !ok {
			t.Fatalf("round %d: acknowledged package %s lost", round, key)
		}
		// The meter holds at least what was acknowledged and at most one unacknowledged step more.
		if u := a.usage[key]; p.BytesUsed < u || p.BytesUsed > u+4096 {
			t.Fatalf("round %d: package %s meter %d, acknowledged %d", round, key, p.BytesUsed, u)
		}
	}
}
