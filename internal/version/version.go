// Package version reports the build's version, set at link time by the Makefile.
package version

import "runtime/debug"

// Version is overridden with -ldflags "-X github.com/peage/appliance/internal/version.Version=...".
var Version = "dev"

// String is the version and, when known, the VCS revision.
func String() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return Version + " (" + s.Value[:12] + ")"
			}
		}
	}
	return Version
}
