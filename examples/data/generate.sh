#!/bin/sh
# generate.sh writes the sample data of this folder with GDAL (3.2 or later:
# gdal_create, gdal_rasterize, gdal_translate, ogr2ogr):
#
#   deforestation.geojson            vector layer, kind deforestation
#   deforestation-coverage.geojson   where that layer has data
#   rasters/loss-year/*.tif          raster layer, kind loss-year (Hansen GFC lossyear values)
#   rasters/forest-2020/*.tif        raster layer, kind forest-2020 (JRC GFC2020 values)
#   plots.geojson                    ten plots to screen against them
#
# Everything is SYNTHETIC: the places are real (a 0.04 x 0.04 degree square
# near Soubre, in the cocoa belt of Cote d'Ivoire) but every forest patch,
# loss patch and plot below was drawn by hand to exercise one screening
# path. None of it says anything about real forest or real farms.
#
# The shapes are written below as CSV files of WKT (EPSG:4326, longitude
# then latitude); GDAL turns them into the GeoJSON and GeoTIFF files. Every
# raster edge is a multiple of 0.0005 degree, so it lies on a pixel edge of
# both grids (0.00025 and 0.0001 degree) and each pixel is wholly in or out.
#
# Run it from anywhere: ./examples/data/generate.sh. It rewrites the outputs
# in place; GDAL writes the same bytes each time, so a re-run changes nothing
# unless this script does. CI does not run it: the outputs are committed.
set -eu

cd "$(dirname "$0")"
for tool in gdal_create gdal_rasterize gdal_translate ogr2ogr; do
	command -v "$tool" >/dev/null || { echo "generate.sh: $tool not found (apt-get install gdal-bin)" >&2; exit 1; }
done
export GDAL_PAM_ENABLED=NO # no .aux.xml files beside the outputs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The square everything lies in: west, south, east, north.
W=-6.62 S=5.76 E=-6.58 N=5.80

# --- Forest in 2020 -------------------------------------------------------
# 1 = forest at the end of 2020. The north half of the square is forest; in
# the south half only a remnant in the west is, the rest is farmland
# (cocoa planted long before 2020).
cat >"$tmp/forest.csv" <<'EOF'
WKT,forest,name
"POLYGON((-6.62 5.78,-6.58 5.78,-6.58 5.80,-6.62 5.80,-6.62 5.78))",1,northern forest
"POLYGON((-6.62 5.76,-6.605 5.76,-6.605 5.78,-6.62 5.78,-6.62 5.76))",1,forest remnant
EOF
printf 'WKT,Integer,String\n' >"$tmp/forest.csvt"

# --- Forest loss by year --------------------------------------------------
# As in Hansen GFC lossyear: k = loss in the year 2000+k, 0 = no loss; above
# 20 is after the EUDR cutoff (2020-12-31).
cat >"$tmp/lossyear.csv" <<'EOF'
WKT,lossyear,name
"POLYGON((-6.592 5.792,-6.586 5.792,-6.586 5.797,-6.592 5.797,-6.592 5.792))",22,2022 loss in the northern forest
"POLYGON((-6.6125 5.77,-6.612 5.77,-6.612 5.7705,-6.6125 5.7705,-6.6125 5.77))",21,2021 loss of four pixels in the remnant
"POLYGON((-6.6 5.77,-6.594 5.77,-6.594 5.775,-6.6 5.775,-6.6 5.77))",15,2015 clearing in the farmland
"POLYGON((-6.59 5.766,-6.584 5.766,-6.584 5.771,-6.59 5.771,-6.59 5.766))",23,2023 replanting in the farmland (no forest in 2020)
EOF
printf 'WKT,Integer,String\n' >"$tmp/lossyear.csvt"

# --- Deforestation after 2020 as a vector layer ---------------------------
# Three patches of forest lost after the cutoff, as a national monitoring
# map might publish them; independent of the rasters (they are two sources,
# and each sample plot is placed to exercise one of them).
cat >"$tmp/deforestation.csv" <<'EOF'
id,WKT,lossYear,note
def-2021-001,"POLYGON((-6.615 5.789,-6.61 5.788,-6.607 5.791,-6.609 5.795,-6.614 5.794,-6.615 5.789))",2021,synthetic
def-2022-002,"POLYGON((-6.6 5.784,-6.595 5.784,-6.595 5.788,-6.6 5.788,-6.6 5.784))",2022,synthetic
def-2023-003,"POLYGON((-6.587 5.783,-6.584 5.7832,-6.583 5.7858,-6.5865 5.786,-6.587 5.783))",2023,synthetic
EOF
printf 'String,WKT,Integer,String\n' >"$tmp/deforestation.csvt"

# Its coverage: the whole square (no loss found there means none).
cat >"$tmp/coverage.csv" <<EOF
id,WKT
sample-square,"POLYGON(($W $S,$E $S,$E $N,$W $N,$W $S))"
EOF
printf 'String,WKT\n' >"$tmp/coverage.csvt"

# --- Plots ----------------------------------------------------------------
# Ten cocoa plots; which verdict each gets and why is in docs/layers.md
# (Sample data). Coordinates have 6 decimals, as the EU information system
# wants; area is given for the point only (a plot under 4 ha).
cat >"$tmp/plots.csv" <<'EOF'
WKT,externalId,commodity,producerCountry,producerName,area,description
"POLYGON((-6.611813 5.790687,-6.610187 5.790687,-6.610187 5.792313,-6.611813 5.792313,-6.611813 5.790687))",CI-01,cocoa,CI,Sample farm 01,,inside the 2021 patch of the vector deforestation layer
"POLYGON((-6.601613 5.785187,-6.599687 5.785187,-6.599687 5.786813,-6.601613 5.786813,-6.601613 5.785187))",CI-02,cocoa,CI,Sample farm 02,,one sixth of it over the 2022 patch of the vector deforestation layer
"POLYGON((-6.590137 5.793863,-6.588363 5.793863,-6.588363 5.795637,-6.590137 5.795637,-6.590137 5.793863))",CI-03,cocoa,CI,Sample farm 03,,inside 2022 raster loss in 2020 forest
"POINT(-6.596127 5.763841)",CI-04,cocoa,CI,Sample farm 04,1.5,a point of 1.5 ha in farmland without loss
"POLYGON((-6.598387 5.771613,-6.596613 5.771613,-6.596613 5.773387,-6.598387 5.773387,-6.598387 5.771613))",CI-05,cocoa,CI,Sample farm 05,,inside 2015 raster loss: before the cutoff
"POLYGON((-6.588387 5.767613,-6.586613 5.767613,-6.586613 5.769387,-6.588387 5.769387,-6.588387 5.767613))",CI-06,cocoa,CI,Sample farm 06,,inside 2023 raster loss where there was no forest in 2020
"POLYGON((-6.583387 5.795613,-6.581613 5.795613,-6.581613 5.797387,-6.583387 5.797387,-6.583387 5.795613))",CI-07,cocoa,CI,Sample farm 07,,in standing 2020 forest without loss
"POLYGON((-6.585413 5.761613,-6.583587 5.761813,-6.583313 5.763187,-6.584713 5.763513,-6.585587 5.762713,-6.585413 5.761613))",CI-08,cocoa,CI,Sample farm 08,,in farmland without loss
"POLYGON((-6.613513 5.768987,-6.611487 5.768987,-6.611487 5.771013,-6.613513 5.771013,-6.613513 5.768987))",CI-09,cocoa,CI,Sample farm 09,,2021 raster loss on about 6 % of it: under both thresholds
"POLYGON((-6.603187 5.762187,-6.601813 5.763813,-6.601813 5.762187,-6.603187 5.763813,-6.603187 5.762187))",CI-10,cocoa,CI,Sample farm 10,,a ring that crosses itself
EOF
printf 'WKT,String,String,String,String,Real,String\n' >"$tmp/plots.csvt"

# --- Vector files -----------------------------------------------------------
# ogr2ogr writes GeoJSON as RFC 7946 wants it (WGS 84, exterior rings
# counter-clockwise), coordinates to 6 decimals, the id column as each
# feature's "id" (the layer feature ID evidence names). A ring that crosses
# itself is written as it is: ogr2ogr does not repair it.
vector() { # vector OUT IN [options]
	out=$1 in=$2
	shift 2
	rm -f "$out"
	ogr2ogr -f GeoJSON -a_srs EPSG:4326 -oo KEEP_GEOM_COLUMNS=NO \
		-lco RFC7946=YES -lco COORDINATE_PRECISION=6 -lco WRITE_NAME=NO "$@" "$out" "$in"
}
vector deforestation.geojson "$tmp/deforestation.csv" -lco ID_FIELD=id
vector deforestation-coverage.geojson "$tmp/coverage.csv" -lco ID_FIELD=id
vector plots.geojson "$tmp/plots.csv"

# --- Raster tiles -----------------------------------------------------------
# raster OUT CSV ATTRIBUTE PIXEL_DEG CREATION_OPTIONS...: gdal_create makes an
# empty single-band 8-bit grid of the square in EPSG:4326 (all 0),
# gdal_rasterize burns each polygon's ATTRIBUTE into the pixels whose centre
# is inside it, and gdal_translate writes the compressed GeoTIFF that `eudr
# layers import --raster` reads, marked synthetic in its metadata.
raster() {
	out=$1 csv=$2 attr=$3 px=$4
	shift 4
	cols=$(awk "BEGIN { printf \"%d\", ($E - $W) / $px + 0.5 }")
	rows=$(awk "BEGIN { printf \"%d\", ($N - $S) / $px + 0.5 }")
	grid="$tmp/$(basename "$out")"
	shapes="$tmp/$(basename "$csv" .csv).geojson" # the CSV with its CRS
	ogr2ogr -f GeoJSON -a_srs EPSG:4326 -oo KEEP_GEOM_COLUMNS=NO "$shapes" "$csv"
	gdal_create -q -of GTiff -ot Byte -bands 1 -burn 0 -outsize "$cols" "$rows" \
		-a_srs EPSG:4326 -a_ullr "$W" "$N" "$E" "$S" "$grid"
	gdal_rasterize -q -a "$attr" -l "$(basename "$csv" .csv)" "$shapes" "$grid"
	mkdir -p "$(dirname "$out")"
	rm -f "$out"
	gdal_translate -q "$@" \
		-mo "SYNTHETIC=sample data for the eudr documentation: not real forest or forest loss" \
		"$grid" "$out"
}

# Loss year on Hansen GFC's grid (0.00025 degree, 160 x 160 pixels), LZW in
# strips as Hansen's tiles are.
raster rasters/loss-year/sample_lossyear_soubre.tif "$tmp/lossyear.csv" lossyear 0.00025 \
	-co COMPRESS=LZW
# Forest in 2020 on a finer grid, about 10 m as JRC GFC2020's (0.0001
# degree, 400 x 400 pixels), Deflate with the horizontal predictor in
# 256 x 256 tiles: screening combines the two grids on the finer one.
raster rasters/forest-2020/sample_forest2020_soubre.tif "$tmp/forest.csv" forest 0.0001 \
	-co COMPRESS=DEFLATE -co PREDICTOR=2 -co TILED=YES -co BLOCKXSIZE=256 -co BLOCKYSIZE=256

ls -l deforestation.geojson deforestation-coverage.geojson plots.geojson rasters/*/*.tif
