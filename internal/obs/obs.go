// Package obs holds the appliance's log keys and a small Prometheus-text metrics registry.
// Metric label values are catalog IDs and fixed words only, never user input.
package obs

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Log keys, shared by every daemon so logs can be joined.
const (
	KeyRequestID = "request_id"
	KeyRoute     = "route"
	KeyStatus    = "status"
	KeyDuration  = "duration_ms"
	KeyErr       = "error" // the one key of an error, in every daemon
	KeyAddr      = "addr"
	KeyComponent = "component"
	KeyUpstream  = "upstream"
	KeyPayer     = "payer"
	KeyAmount    = "amount"
	KeyStack     = "stack"
)

// Log keys of one part or another, in one place so that two parts logging the same thing use
// one spelling (make lint's TestLogKeysAreObsConstants refuses a key that is not one of these).
const (
	KeyAccountNonce         = "account_nonce"
	KeyAdminSocket          = "admin_socket"
	KeyAttempt              = "attempt"
	KeyBodiesMovedToDisk    = "bodies_moved_to_disk"
	KeyBox                  = "box" // a fleet box's name: the one that served, or failed, a call
	KeyBudgetBytes          = "budget_bytes"
	KeyBytes                = "bytes"
	KeyBytesDown            = "bytes_down"
	KeyBytesDropped         = "bytes_dropped"
	KeyBytesUp              = "bytes_up"
	KeyCopy                 = "copy"
	KeyCount                = "count"
	KeyFromBlock            = "from_block"
	KeyHeadBlock            = "head_block"
	KeyCurrent              = "current"
	KeyDetail               = "detail"
	KeyDir                  = "dir"
	KeyDiskFreeBytes        = "disk_free_bytes"
	KeyDiskMarginBytes      = "disk_margin_bytes"
	KeyEffectiveBudgetBytes = "effective_budget_bytes"
	KeyExitASN              = "exit_asn"
	KeyFile                 = "file"
	KeyFiles                = "files"
	KeyGB                   = "gb"
	KeyHost                 = "host"
	KeyInbox                = "inbox"
	KeyJobs                 = "jobs"
	KeyJournal              = "journal"
	KeyMemoryMB             = "memory_mb"
	KeyMissing              = "missing"
	KeyMonitorAwake         = "monitor_awake"
	KeyNetwork              = "network"
	KeyNofile               = "nofile"
	KeyNumberSID            = "number_sid"
	KeyOffset               = "offset"
	KeyOp                   = "op"
	KeyOrphans              = "orphans"
	KeyPID                  = "pid"
	KeyPath                 = "path"
	KeyPayTo                = "pay_to"
	KeyPayment              = "payment"
	KeyPhase                = "phase"
	KeyProcs                = "procs"
	KeyQuarantined          = "quarantined"
	KeyReason               = "reason"
	KeyRecords              = "records"
	KeySession              = "session"
	KeySigner               = "signer"
	KeySlot                 = "slot"
	KeyState                = "state"
	KeyStep                 = "step"
	KeyStoredBytes          = "stored_bytes"
	KeyTipWei               = "tip_wei"
	KeyTruncatedBytes       = "truncated_bytes"
	KeyTx                   = "tx"
	KeyURL                  = "url"
	KeyValidBytes           = "valid_bytes"
	KeyVersion              = "version"
	KeyWhy                  = "why"
)

// NewLogger returns a JSON (or text, for terminals) slog logger at level.
func NewLogger(w io.Writer, level slog.Level, json bool) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if json {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Discard returns a logger that drops every record: the quiet logger of tests.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// StderrIsTerminal decides between text and JSON logs.
func StderrIsTerminal() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Registry is a set of metrics rendered in the Prometheus text format.
type Registry struct {
	mu      sync.Mutex
	metrics []metric
}

type metric interface {
	write(w io.Writer)
	name() string
	samples() []Sample
}

// Sample is one series of a metric as /metrics shows it: its label values by label name and
// its value (a histogram's series give their observation count).
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Samples reads the series of the metric registered under name (none when there is no such
// metric), so in-process views such as the operator's dashboard show the figures /metrics does.
func (r *Registry) Samples(name string) []Sample {
	r.mu.Lock()
	ms := slices.Clone(r.metrics)
	r.mu.Unlock()
	var out []Sample
	for _, m := range ms {
		if m.name() == name {
			out = append(out, m.samples()...)
		}
	}
	return out
}

func labelMap(names, values []string) map[string]string {
	m := make(map[string]string, len(names))
	for i, n := range names {
		if i < len(values) {
			m[n] = values[i]
		}
	}
	return m
}

// Counter is a monotonically increasing counter family with fixed label names.
type Counter struct {
	n, help string
	labels  []string
	vals    sync.Map // joined label values → *atomic.Uint64
}

// Counter registers a counter family.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	c := &Counter{n: name, help: help, labels: labels}
	r.add(c)
	return c
}

func (r *Registry) add(m metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.metrics = append(r.metrics, m)
}

// Add adds d to the series with the given label values.
func (c *Counter) Add(d uint64, values ...string) {
	// The key is joined on the stack: the API edge adds to a counter on every request, and a
	// lookup by the buffer's string copies nothing (only a new series stores its own).
	var buf [128]byte
	key := buf[:0]
	for i, v := range values {
		if i > 0 {
			key = append(key, 0)
		}
		key = append(key, v...)
	}
	v, ok := c.vals.Load(string(key))
	if !ok {
		v, _ = c.vals.LoadOrStore(string(key), new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(d)
}

// Inc adds one.
func (c *Counter) Inc(values ...string) { c.Add(1, values...) }

func (c *Counter) name() string { return c.n }

func (c *Counter) samples() []Sample {
	var out []Sample
	c.vals.Range(func(k, v any) bool {
		out = append(out, Sample{Labels: labelMap(c.labels, strings.Split(k.(string), "\x00")), Value: float64(v.(*atomic.Uint64).Load())})
		return true
	})
	return out
}

func (c *Counter) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", c.n, c.help, c.n)
	vals := map[string]uint64{}
	c.vals.Range(func(k, v any) bool { vals[k.(string)] = v.(*atomic.Uint64).Load(); return true })
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s%s %d\n", c.n, labelText(c.labels, strings.Split(k, "\x00")), vals[k])
	}
}

// Gauge reads its values from a function at scrape time (pool sizes, queue depths).
type Gauge struct {
	n, help string
	labels  []string
	read    func() map[string]float64 // label value (single label) → value; "" key when unlabelled
}

// GaugeFunc registers a gauge whose values are read at scrape time. With one label name,
// read's keys are that label's values; with none, read returns {"": v}.
func (r *Registry) GaugeFunc(name, help string, read func() map[string]float64, labels ...string) {
	r.add(&Gauge{n: name, help: help, labels: labels, read: read})
}

func (g *Gauge) name() string { return g.n }

func (g *Gauge) samples() []Sample {
	var out []Sample
	for k, v := range g.read() {
		labels := map[string]string{}
		if len(g.labels) == 1 {
			labels[g.labels[0]] = k
		}
		out = append(out, Sample{Labels: labels, Value: v})
	}
	return out
}

func (g *Gauge) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", g.n, g.help, g.n)
	vals := g.read()
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		labels := ""
		if len(g.labels) == 1 {
			labels = labelText(g.labels, []string{k})
		}
		fmt.Fprintf(w, "%s%s %g\n", g.n, labels, vals[k])
	}
}

// Histogram counts observations into fixed buckets (seconds).
type Histogram struct {
	n, help string
	buckets []float64
	series  sync.Map // label value → *histSeries
	label   string
}

type histSeries struct {
	counts []atomic.Uint64 // observations in each bucket alone (le the bucket, above the one before), cumulated when written
	sumNs  atomic.Uint64   // sum in nanounits, so it can be added atomically
	count  atomic.Uint64
}

// Histogram registers a histogram family with one label.
func (r *Registry) Histogram(name, help, label string, buckets []float64) *Histogram {
	h := &Histogram{n: name, help: help, buckets: buckets, label: label}
	r.add(h)
	return h
}

// Observe records v for the label value.
func (h *Histogram) Observe(v float64, labelValue string) {
	si, ok := h.series.Load(labelValue)
	if !ok {
		si, _ = h.series.LoadOrStore(labelValue, &histSeries{counts: make([]atomic.Uint64, len(h.buckets))})
	}
	s := si.(*histSeries)
	// One bucket's count, not every bucket at or above v: a fast request was nine atomic adds.
	for i, b := range h.buckets {
		if v <= b {
			s.counts[i].Add(1)
			break
		}
	}
	s.sumNs.Add(uint64(v * 1e9))
	s.count.Add(1)
}

func (h *Histogram) name() string { return h.n }

func (h *Histogram) samples() []Sample {
	var out []Sample
	h.series.Range(func(k, v any) bool {
		out = append(out, Sample{Labels: map[string]string{h.label: k.(string)}, Value: float64(v.(*histSeries).count.Load())})
		return true
	})
	return out
}

func (h *Histogram) write(w io.Writer) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", h.n, h.help, h.n)
	series := map[string]*histSeries{}
	h.series.Range(func(k, v any) bool { series[k.(string)] = v.(*histSeries); return true })
	keys := make([]string, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := series[k]
		var cum uint64
		for i, b := range h.buckets {
			cum += s.counts[i].Load()
			fmt.Fprintf(w, "%s_bucket{%s=%q,le=\"%g\"} %d\n", h.n, h.label, k, b, cum)
		}
		n := s.count.Load()
		fmt.Fprintf(w, "%s_bucket{%s=%q,le=\"+Inf\"} %d\n", h.n, h.label, k, n)
		fmt.Fprintf(w, "%s_sum{%s=%q} %g\n%s_count{%s=%q} %d\n", h.n, h.label, k, float64(s.sumNs.Load())/1e9, h.n, h.label, k, n)
	}
}

func labelText(names, values []string) string {
	if len(names) == 0 {
		return ""
	}
	parts := make([]string, len(names))
	for i, n := range names {
		v := ""
		if i < len(values) {
			v = values[i]
		}
		parts[i] = fmt.Sprintf("%s=%q", n, v)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// WriteText renders every metric in registration order.
func (r *Registry) WriteText(w io.Writer) {
	r.mu.Lock()
	ms := slices.Clone(r.metrics)
	r.mu.Unlock()
	for _, m := range ms {
		m.write(w)
	}
}
