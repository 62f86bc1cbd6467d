package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/peage/appliance/settle/pay"
)

// TestPayWithEmptyFreeBucket: once a client's free-call bucket is empty, `appliance pay` on a
// route that grants a free first call gets the 402 and pays (200, with the settled receipt on
// stderr), through the real server and the embedded chain, both when the day's free call on
// that route is unused and when it was used.
func TestPayWithEmptyFreeBucket(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "appliance.toml")
	if err := os.WriteFile(cfgPath, []byte("[api]\nfree_per_minute = 1\nfree_burst = 1\n[settlement]\nsettlement = \"sync\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDev(t, "--config", cfgPath)
	base := "http://" + d.api
	// The bucket's one token goes to the free first call of /v1/chain/block.
	resp, err := http.Get(base + "/v1/chain/block")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Payment-Response") != "" {
		t.Fatalf("the free first call: %d %s", resp.StatusCode, body)
	}
	for _, c := range []struct{ name, path string }{
		{"day's free call unused", "/v1/chain/gas"},
		{"day's free call used", "/v1/chain/block"},
	} {
		var out, errOut bytes.Buffer
		err := pay.Main(context.Background(), []string{"--key", filepath.Join(d.state, "dev-payer.key"), base + c.path}, &out, &errOut)
		if err != nil || !strings.Contains(errOut.String(), `"success": true`) || !strings.Contains(errOut.String(), `"transaction": "0x`) || out.Len() == 0 {
			t.Errorf("%s: appliance pay %s: %v\nstdout %s\nstderr %s", c.name, c.path, err, out.String(), errOut.String())
		}
	}
}
