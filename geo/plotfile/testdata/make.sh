#!/usr/bin/env bash
# Writes the same plots (plots.geojson) in the formats plot files come in,
# with GDAL's ogr2ogr (Debian package gdal-bin), so that the readers are
# tested on files another tool made. Run it from this folder; the results
# are committed, so the tests need no GDAL.
set -euo pipefail
cd "$(dirname "$0")"
ogr2ogr --version
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=plots.geojson
rm -f plots.kml plots.kmz plots-wgs84.zip plots-utm30n.zip plots-wkt.csv points-xy.csv plots.xlsx

# KML (the KML driver: ExtendedData with SchemaData/SimpleData) and KMZ
# (LIBKML, zipped).
ogr2ogr -f KML plots.kml "$src" -nln plots
ogr2ogr -f LIBKML plots.kmz "$src" -nln plots

# Zipped Shapefiles: one layer per geometry type, as a Shapefile holds one;
# field names cut to 10 characters by the .dbf. In WGS84, and in UTM zone
# 30N (the Ghana and Cote d'Ivoire plots; Brazil is far out of the zone).
shp() { # shp OUT.zip SRS WHERE
	local dir="$tmp/$(basename "$1" .zip)"
	mkdir -p "$dir"
	ogr2ogr -f "ESRI Shapefile" "$dir/polygons.shp" "$src" -t_srs "$2" -nlt MULTIPOLYGON \
		-dialect OGRSQL -sql "SELECT * FROM plots WHERE OGR_GEOMETRY IN ('POLYGON','MULTIPOLYGON') AND ($3)"
	ogr2ogr -f "ESRI Shapefile" "$dir/points.shp" "$src" -t_srs "$2" -nlt POINT \
		-dialect OGRSQL -sql "SELECT * FROM plots WHERE OGR_GEOMETRY = 'POINT' AND ($3)"
	(cd "$dir" && zip -q -X "$OLDPWD/$1" ./*)
}
shp plots-wgs84.zip EPSG:4326 "1=1"
shp plots-utm30n.zip EPSG:32630 "producerCountry <> 'BR'"

# CSV with a WKT column, CSV of points with X and Y, and a workbook with a
# WKT column (made from the CSV, whose WKT column it keeps as text).
ogr2ogr -f CSV plots-wkt.csv "$src" -lco GEOMETRY=AS_WKT
ogr2ogr -f CSV points-xy.csv "$src" -lco GEOMETRY=AS_XY -dialect OGRSQL -sql "SELECT * FROM plots WHERE OGR_GEOMETRY = 'POINT'"
ogr2ogr -f XLSX plots.xlsx plots-wkt.csv -oo KEEP_GEOM_COLUMNS=YES -nln plots
ls -l

# Plots with holes, a MultiPolygon whose second part has a hole, letters
# beyond ASCII and a KML <name> and <description> (from the Name and
# Description fields): as KML, and as a one-layer zipped Shapefile in
# WGS84 (whose .dbf GDAL writes in ISO-8859-1) and in UTM zone 21S (the
# Brazilian plots).
rm -f extra.kml extra-wgs84.zip extra-utm21s.zip
ogr2ogr -f KML extra.kml extra.geojson -nln extra
shp1() { # shp1 OUT.zip SRS WHERE
	local dir="$tmp/$(basename "$1" .zip)"
	mkdir -p "$dir"
	ogr2ogr -f "ESRI Shapefile" "$dir/extra.shp" extra.geojson -t_srs "$2" -nlt MULTIPOLYGON \
		-dialect OGRSQL -sql "SELECT * FROM extra WHERE $3"
	(cd "$dir" && zip -q -X "$OLDPWD/$1" ./*)
}
shp1 extra-wgs84.zip EPSG:4326 "1=1"
shp1 extra-utm21s.zip EPSG:32721 "producerCountry = 'BR'"
ls -l extra*
