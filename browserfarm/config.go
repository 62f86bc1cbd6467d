package browserfarm

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Config is the farm's part of the appliance configuration ([browserfarm] in the TOML file).
type Config struct {
	// Chromium is the browser binary; rod never downloads one.
	Chromium string `toml:"chromium"`
	// Size is the number of browsers; 0 derives it from cores and memory.
	Size int `toml:"size"`
	// Queue is how many paid calls may wait for a browser before new ones get 429; 0 means 4
	// per browser.
	Queue int `toml:"queue"`
	// FreeShare is the fraction of the browsers that calls nobody pays for may hold at once
	// (at least one browser). Paid jobs are always taken first, so they never wait behind
	// free ones.
	FreeShare float64 `toml:"free_share"`
	// FreeQueue is how many free calls may wait for their share before new ones get 429; 0
	// means 2 per free browser.
	FreeQueue int `toml:"free_queue"`
	// PayerBrowsers and ClientBrowsers cap the browsers one payer, and one client (an address
	// or IPv6 prefix, api/clientid), may hold at once, so that no caller holds the whole pool;
	// 0 means half the pool, rounded up. Waiting calls are served fairly between callers
	// (browserfarm/lanes.go).
	PayerBrowsers  int `toml:"payer_browsers"`
	ClientBrowsers int `toml:"client_browsers"`
	// StrikeLimit and StrikeHalfLife: a job whose page holds its browser until the job's
	// deadline is a strike against its payer and its client (they chose the target). A caller
	// whose strikes, each worth 1 and halving every StrikeHalfLife, add up to StrikeLimit is
	// demoted: one browser at most, served after every caller in good standing. The defaults
	// (1.5, 30 minutes) demote at the second stall within 30 minutes, for at least 12 minutes
	// after the last one.
	StrikeLimit    float64       `toml:"strike_limit"`
	StrikeHalfLife time.Duration `toml:"strike_half_life"`
	// JobTimeout caps one job when the caller's context has a later (or no) deadline.
	JobTimeout time.Duration `toml:"job_timeout"`
	// RecycleJobs, RecycleAge and RecycleMemoryMB retire a browser after that many jobs, that
	// age, or when its process group's memory (PSS) passes the mark (0 disables each).
	RecycleJobs     int           `toml:"recycle_jobs"`
	RecycleAge      time.Duration `toml:"recycle_age"`
	RecycleMemoryMB int           `toml:"recycle_memory_mb"`
	// LaunchStagger spaces browser launches so a burst of restarts does not starve the CPU.
	LaunchStagger time.Duration `toml:"launch_stagger"`
	// LaunchTimeout bounds one browser's start (process up, DevTools answering). After each
	// failed start the slot's next budget doubles, up to 16 times this: a machine too slow for
	// the first budget (a box at boot, an emulated guest) still gets its browsers, only later.
	LaunchTimeout time.Duration `toml:"launch_timeout"`
	// JSHeapMB caps each renderer's V8 heap, so a page that allocates without end crashes its
	// own tab quickly instead of pushing the box into swap.
	JSHeapMB int `toml:"js_heap_mb"`
	// MaxHTMLBytes is the largest rendered document a job returns; bigger pages fail with 413.
	MaxHTMLBytes int `toml:"max_html_bytes"`
	// ScreenshotMaxHeight caps full-page screenshots in CSS pixels; Chromium repeats or blanks
	// tiles beyond ~16k px, so a taller page is cut and the answer says so.
	ScreenshotMaxHeight int `toml:"screenshot_max_height"`
	// SettleQuiet is how long the DOM must stay unchanged after load before the page is read,
	// so content inserted by scripts is seen; SettleMax bounds that wait.
	SettleQuiet time.Duration `toml:"settle_quiet"`
	SettleMax   time.Duration `toml:"settle_max"`
	// LoadWait bounds the wait for the window load event once the HTML is complete; past it
	// the page is read as it is and the result says load_complete=false.
	LoadWait time.Duration `toml:"load_wait"`
	// TempDir holds the per-browser profile directories (default os.TempDir()).
	TempDir string `toml:"temp_dir"`
	// Fontconfig is a fonts.conf that decides which fonts Chromium renders with (its
	// FONTCONFIG_FILE); empty uses the machine's configuration. Tests set one naming only the
	// fonts ops/setup.sh installs, so text metrics are the same on every machine.
	Fontconfig string `toml:"fontconfig"`
}

// DefaultConfig sizes the pool for the machine it runs on.
func DefaultConfig() Config {
	return Config{
		Chromium:            "/usr/bin/chromium",
		Size:                defaultSize(runtime.NumCPU(), totalMemoryMB()),
		FreeShare:           0.34,
		StrikeLimit:         1.5,
		StrikeHalfLife:      30 * time.Minute,
		JobTimeout:          45 * time.Second,
		RecycleJobs:         100,
		RecycleAge:          30 * time.Minute,
		RecycleMemoryMB:     1500,
		LaunchStagger:       200 * time.Millisecond,
		LaunchTimeout:       20 * time.Second,
		JSHeapMB:            512,
		MaxHTMLBytes:        16 << 20,
		ScreenshotMaxHeight: 15000,
		SettleQuiet:         50 * time.Millisecond,
		SettleMax:           2 * time.Second,
		LoadWait:            8 * time.Second,
	}
}

// defaultSize gives one browser per core plus one (a job waits on the network part of its
// time), bounded by ~600 MB of memory per busy browser and a hard ceiling of 8.
func defaultSize(cores, memMB int) int {
	n := cores + 1
	if memMB > 0 {
		n = min(n, memMB/600)
	}
	return max(1, min(n, 8))
}

// launchBudget is the start budget after the given number of consecutive failed starts.
func (c Config) launchBudget(failures int) time.Duration {
	return c.LaunchTimeout << min(failures, 4)
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Chromium == "" {
		c.Chromium = d.Chromium
	}
	if c.Size <= 0 {
		c.Size = d.Size
	}
	if c.Queue <= 0 {
		c.Queue = 4 * c.Size
	}
	if c.FreeShare <= 0 || c.FreeShare > 1 {
		c.FreeShare = d.FreeShare
	}
	if c.FreeQueue <= 0 {
		c.FreeQueue = 2 * c.freeSlots()
	}
	if c.PayerBrowsers <= 0 {
		c.PayerBrowsers = (c.Size + 1) / 2
	}
	if c.ClientBrowsers <= 0 {
		c.ClientBrowsers = (c.Size + 1) / 2
	}
	if c.StrikeLimit <= 0 {
		c.StrikeLimit = d.StrikeLimit
	}
	if c.StrikeHalfLife <= 0 {
		c.StrikeHalfLife = d.StrikeHalfLife
	}
	if c.JobTimeout <= 0 {
		c.JobTimeout = d.JobTimeout
	}
	if c.LaunchTimeout <= 0 {
		c.LaunchTimeout = d.LaunchTimeout
	}
	if c.JSHeapMB <= 0 {
		c.JSHeapMB = d.JSHeapMB
	}
	if c.MaxHTMLBytes <= 0 {
		c.MaxHTMLBytes = d.MaxHTMLBytes
	}
	if c.ScreenshotMaxHeight <= 0 {
		c.ScreenshotMaxHeight = d.ScreenshotMaxHeight
	}
	if c.SettleQuiet <= 0 {
		c.SettleQuiet = d.SettleQuiet
	}
	if c.SettleMax <= 0 {
		c.SettleMax = d.SettleMax
	}
	if c.LoadWait <= 0 {
		c.LoadWait = d.LoadWait
	}
	if c.TempDir == "" {
		c.TempDir = os.TempDir()
	}
	return c
}

func (c Config) laneLimits() laneLimits {
	return laneLimits{paidCap: c.Queue, freeCap: c.FreeQueue, freeSlots: c.freeSlots(), workers: c.Size,
		payerBrowsers: c.PayerBrowsers, clientBrowsers: c.ClientBrowsers,
		strikeLimit: c.StrikeLimit, strikeHalfLife: c.StrikeHalfLife}
}

// freeSlots is how many browsers free jobs may hold at once: their share, rounded down so
// it is never exceeded, but at least one.
func (c Config) freeSlots() int {
	return max(1, int(c.FreeShare*float64(c.Size)))
}

func totalMemoryMB() int {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	return 0
}
