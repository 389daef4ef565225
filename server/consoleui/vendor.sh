#!/usr/bin/env bash
# Re-fetches what the console takes from npm, at the pinned versions, and
# records what was taken in each directory's VERSION:
#   maplibre/  MapLibre GL JS, its CSP build (no blob: worker, no eval)
#   preact/    Preact with htm in one ES module (htm's preact/standalone)
#   basemap/   Natural Earth 1:110m country borders as GeoJSON, converted
#              from world-atlas's TopoJSON by topojson-client, coordinates
#              rounded to 0.01 degree (about 1 km: a background, not a survey)
# Run it from anywhere; needs npm, node and sha256sum. To upgrade, change a
# version below and the matching constant in consoleui.go
# (consoleui_test.go checks they agree), run it, and look at /console in a
# browser (EUDR_SCREENSHOT_DIR=/tmp/shots go test -run TestConsole_Browser .).
set -euo pipefail

MAPLIBRE_VERSION=5.24.1
HTM_VERSION=3.1.1
# htm's standalone module carries Preact 10 inside; its MIT licence is taken
# from this release of Preact.
PREACT_LICENSE_VERSION=10.5.15
WORLD_ATLAS_VERSION=2.0.2
TOPOJSON_CLIENT_VERSION=3.1.0

here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# fetch PACKAGE VERSION: unpacks the tarball into $work/PACKAGE and prints
# the lines of VERSION that identify it.
fetch() {
	local package=$1 version=$2 tarball
	tarball="$(cd "$work" && npm pack --silent "$package@$version")"
	mkdir -p "$work/$package"
	tar -xzf "$work/$tarball" -C "$work/$package"
	echo "$package $version"
	echo "tarball $tarball sha256 $(sha256sum "$work/$tarball" | cut -d' ' -f1)"
	echo "npm integrity $(npm view "$package@$version" dist.integrity)"
}

# record DIR FILES...: the sha256 of each file, checked by consoleui_test.go.
record() {
	local dir=$1
	shift
	echo
	echo "sha256 of each file (checked by consoleui_test.go):"
	(cd "$here/$dir" && sha256sum "$@")
}

# take PACKAGE VERSION DIR FROM:TO...: copies files out of the package.
take() {
	local package=$1 version=$2 dir=$3
	shift 3
	rm -rf "${here:?}/$dir"
	mkdir -p "$here/$dir"
	local head names=()
	head="$(fetch "$package" "$version")"
	for pair in "$@"; do
		cp "$work/$package/package/${pair%%:*}" "$here/$dir/${pair##*:}"
		names+=("${pair##*:}")
	done
	{ echo "$head"; record "$dir" "${names[@]}"; } >"$here/$dir/VERSION"
}

take maplibre-gl "$MAPLIBRE_VERSION" maplibre \
	dist/maplibre-gl-csp.js:maplibre-gl-csp.js \
	dist/maplibre-gl-csp-worker.js:maplibre-gl-csp-worker.js \
	dist/maplibre-gl.css:maplibre-gl.css \
	LICENSE.txt:LICENSE.txt
take htm "$HTM_VERSION" preact \
	preact/standalone.module.js:standalone.module.js \
	LICENSE:LICENSE
{
	echo
	fetch preact "$PREACT_LICENSE_VERSION"
	cp "$work/preact/package/LICENSE" "$here/preact/preact-LICENSE"
	record preact preact-LICENSE
} >>"$here/preact/VERSION"

# The base map: countries as GeoJSON features with their name.
rm -rf "$here/basemap/countries.geojson" "$here/basemap/VERSION"
mkdir -p "$here/basemap"
{
	fetch world-atlas "$WORLD_ATLAS_VERSION"
	fetch topojson-client "$TOPOJSON_CLIENT_VERSION"
} >"$work/basemap-head"
node -e '
const fs = require("fs");
const topojson = require(process.argv[1]);
const topo = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const fc = topojson.feature(topo, topo.objects.countries);
const round = (c) => typeof c[0] === "number" ? [Math.round(c[0] * 100) / 100, Math.round(c[1] * 100) / 100] : c.map(round);
// A ring that crosses the antimeridian (Fiji, the east of Russia) jumps
// from 180 to -180, which a flat map draws as a line across the world: its
// western longitudes are moved past 180 instead. Antarctica, around the
// pole, keeps its edge along the bottom of the map.
const crosses = (r) => r.some((p, i) => i > 0 && Math.abs(p[0] - r[i - 1][0]) > 180);
const unwrap = (r) => crosses(r) ? r.map(([x, y]) => [x < 0 ? x + 360 : x, y]) : r;
const polygons = (g) => g.type === "Polygon" ? [g.coordinates] : g.coordinates;
fc.features = fc.features.map((f) => {
	let coords = polygons(f.geometry).map((p) => p.map((r) => f.properties.name === "Antarctica" ? r : unwrap(r)));
	coords = round(f.geometry.type === "Polygon" ? coords[0] : coords);
	return {type: "Feature", properties: {name: f.properties.name}, geometry: {type: f.geometry.type, coordinates: coords}};
});
process.stdout.write(JSON.stringify(fc) + "\n");
' "$work/topojson-client/package/dist/topojson-client.js" "$work/world-atlas/package/countries-110m.json" \
	>"$here/basemap/countries.geojson"
cp "$work/world-atlas/package/LICENSE" "$here/basemap/world-atlas-LICENSE"
{ cat "$work/basemap-head"; record basemap countries.geojson world-atlas-LICENSE; } >"$here/basemap/VERSION"

echo "vendored maplibre-gl $MAPLIBRE_VERSION, htm $HTM_VERSION (Preact), world-atlas $WORLD_ATLAS_VERSION into $here"
