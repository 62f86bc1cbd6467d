// Package polyline encodes a line in Google's Encoded Polyline Algorithm Format (precision 5),
// the "polyline" geometry of OSRM, Google and most map libraries.
package polyline

import (
	"math"
	"strings"
)

// Encode writes points given as [lon, lat] (GeoJSON order) at 1e-5 degree precision.
func Encode(points [][2]float64) string {
	var b strings.Builder
	var prevLat, prevLon int64
	for _, p := range points {
		lat, lon := round(p[1]), round(p[0])
		writeValue(&b, lat-prevLat)
		writeValue(&b, lon-prevLon)
		prevLat, prevLon = lat, lon
	}
	return b.String()
}

func round(deg float64) int64 { return int64(math.Round(deg * 1e5)) }

// writeValue writes one signed delta: zig-zag shifted, then 5-bit chunks from the low end,
// each but the last flagged with 0x20, each offset by 63 into printable ASCII.
func writeValue(b *strings.Builder, v int64) {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	for u >= 0x20 {
		b.WriteByte(byte((0x20 | (u & 0x1f)) + 63))
		u >>= 5
	}
	b.WriteByte(byte(u + 63))
}
