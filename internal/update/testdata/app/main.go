// Command app stands in for the appliance in the updater's tests: a real process that keeps
// durable state in a journal of its state directory (like the ledger) and reports its
// version on /healthz. Each test release is this program linked with another version and,
// for the broken ones, a fault:
//
//	exit          opens the state, then exits 1 at once (a crash loop under the supervisor)
//	unhealthy     serves /healthz as "degraded" forever
//	crash-later   serves ok for a second, then exits 2
//
// /records lists which version wrote each record, so a test can see that every version read
// what the others wrote.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/peage/appliance/internal/journal"
)

var (
	version = "dev"
	fault   = ""
)

type record struct {
	By string `json:"by"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "health listener")
	stateDir := flag.String("state", "", "state directory")
	flag.Parse()
	if err := run(*addr, *stateDir); err != nil {
		fmt.Fprintln(os.Stderr, "app:", err)
		os.Exit(1)
	}
}

func run(addr, stateDir string) error {
	j, err := journal.Open(journal.Options{Dir: stateDir, Name: "app", Sync: journal.SyncAlways})
	if err != nil {
		return err
	}
	defer j.Close()
	var mu sync.Mutex
	var by []string
	if err := j.Replay(func(rec []byte) error {
		var r record
		if err := json.Unmarshal(rec, &r); err != nil {
			return err
		}
		by = append(by, r.By)
		return nil
	}); err != nil {
		return fmt.Errorf("reading the state: %w", err)
	}
	rec, _ := json.Marshal(record{By: version})
	if err := j.Append(rec); err != nil {
		return err
	}
	by = append(by, version)
	if fault == "exit" {
		return fmt.Errorf("version %s exits at start (test fault)", version)
	}
	status := "ok"
	if fault == "unhealthy" {
		status = "degraded"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(map[string]string{"status": status, "version": version})
	})
	mux.HandleFunc("GET /records", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		json.NewEncoder(w).Encode(by)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if fault == "crash-later" {
		select {
		case <-time.After(time.Second):
			os.Exit(2)
		case <-ctx.Done():
		}
	}
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}
