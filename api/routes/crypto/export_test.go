package crypto

import "github.com/peage/appliance/api/upstream/coingecko"

// ThinLen is how many points a series of n keeps.
func ThinLen(n int) int {
	pts := make([]coingecko.Point, n)
	for i := range pts {
		pts[i].MS = int64(i)
	}
	kept := thin(pts, maxPoints)
	if n > 0 && (kept[0].MS != 0 || kept[len(kept)-1].MS != int64(n-1)) {
		return -1 // first and last must be kept
	}
	return len(kept)
}

// CanonicalLink exposes the link identity used to remove duplicates.
var CanonicalLink = canonicalLink
