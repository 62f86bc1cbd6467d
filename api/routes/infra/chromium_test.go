package infra

import (
	"context"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/testenv"
)

// countingListener counts every TCP connection the browser opens to the "evil" host.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func serve(t *testing.T, h http.Handler) (string, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := &http.Server{Handler: h}
	go srv.Serve(cl)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), cl
}

func chromiumDump(t *testing.T, bin, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", "--dump-dom", url).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return string(out)
}

// The served page renders in a real browser without a single request leaving it: every hostile
// input points at a local "evil" server that counts connections. The sanitiser alone must hold
// (page served without CSP), and so must the real serving (sanitised + CSP). A control page of
// the raw hostile markup proves the counter sees what a leak would do.
func TestChromiumNoExternalRequest(t *testing.T) {
	testenv.NeedsBrowser(t)
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: run ops/setup.sh (make test does)")
	}
	evilAddr, evil := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
	}))
	// alert() would block the headless browser on the control page: make the scripts log instead.
	raw := strings.NewReplacer("evil.example", evilAddr, "alert(", "console.log(", "msgbox(", "console.log(").Replace(strings.Join(hostile, "\n")) +
		`<img src="http://` + evilAddr + `/plain.png"><div style="background:url(http://` + evilAddr + `/bg.png);width:10px;height:10px"></div>`
	page := SanitizePage(raw+`<svg width="20" height="20"><circle cx="10" cy="10" r="8" fill="teal"/><text x="2" y="12">SVGOK</text></svg><p id="ok" style="color:red">RENDERED</p>`, "t")

	pageAddr, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/raw":
			w.Write([]byte(raw))
		case "/nocsp":
			w.Write([]byte(page))
		default:
			for k, v := range PageHeaders {
				w.Header().Set(k, v)
			}
			w.Write([]byte(page))
		}
	}))

	dom := chromiumDump(t, bin, "http://"+pageAddr+"/raw")
	time.Sleep(200 * time.Millisecond)
	if evil.n.Load() == 0 {
		t.Fatalf("control: the raw hostile page made no request; the counter is blind (dom %d bytes)", len(dom))
	}
	t.Logf("control: raw hostile markup opened %d connections", evil.n.Load())

	for _, path := range []string{"/nocsp", "/p"} {
		evil.n.Store(0)
		dom := chromiumDump(t, bin, "http://"+pageAddr+path)
		time.Sleep(200 * time.Millisecond)
		if n := evil.n.Load(); n != 0 {
			t.Fatalf("%s: the sanitised page opened %d connections", path, n)
		}
		for _, want := range []string{"RENDERED", "SVGOK", "<circle", "<svg"} {
			if !strings.Contains(dom, want) {
				t.Fatalf("%s: rendered DOM lacks %q:\n%s", path, want, dom)
			}
		}
		if strings.Contains(strings.ToLower(dom), "<script") || strings.Contains(dom, "<iframe") {
			t.Fatalf("%s: rendered DOM has script or iframe", path)
		}
	}
}
