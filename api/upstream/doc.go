// Package upstream declares the external services the API calls: one Spec row per upstream
// in Specs, with config overrides by name, and the one typed error every connector returns.
//
// Each upstream is a package under api/upstream/<name> with a typed Client built on
// api/upstream/httpc and fixtures in the real wire format beside it. Adding an upstream is
// one package and one row in Specs:
//
//  1. add the row to Specs: name, base URL, timeout, a rate below the published one, retries,
//     the credential (KeyParam or KeyHeader, NeedsKey when the route must wait for it) and
//     the terms note;
//  2. write api/upstream/<name>: `const Name`, `New(*httpc.Client) *Client`, methods taking a
//     context and returning typed answers, and `Ready() error`;
//  3. record the upstream's answers (success, empty, error bodies) under testdata/ and test the
//     client against upstreamtest.New, which serves them on the same paths;
//  4. construct it in the route package from the resolved specs and bind the routes.
//
// Operators override any row by name in the [upstream.override.<name>] config section.
package upstream
