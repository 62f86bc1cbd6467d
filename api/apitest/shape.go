package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/peage/appliance/api/catalog"
)

// shapeCheck holds every successful JSON answer the harness's client receives to the
// service interface: a field the spec names for the route is always there (null when
// unknown) with the spec's type. Every route test is thus also a test of the answer's shape.
type shapeCheck struct {
	t    testing.TB
	cat  *catalog.Catalog
	next http.RoundTripper
}

func (s shapeCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	e := s.cat.ByPath(req.URL.Path)
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); e == nil || mt != "application/json" {
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return resp, nil // the test reading the body meets the error
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return resp, nil
	}
	if lack := e.MissingFields(v); len(lack) > 0 {
		s.t.Errorf("%s %s: the answer lacks fields the spec names for it, or gives them another type: %s",
			req.Method, req.URL.Path, strings.Join(lack, ", "))
	}
	return resp, nil
}
