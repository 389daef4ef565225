#!/bin/sh
# Makes countries.bin.gz, the country boundaries package borders embeds,
# from Natural Earth's admin 0 countries at 1:10m (version 4.1.0, public
# domain) as the npm package world-atlas 2.0.2 ships them (TopoJSON, ISO
# 3166-1 numeric ids; the package is ISC-licensed), with the ISO 3166-1
# alpha-2 codes and names of iso-codes (Debian package iso-codes).
# Run by hand from anywhere when the source changes; needs npm, go and
# iso-codes (apt-get install iso-codes).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
iso=/usr/share/iso-codes/json/iso_3166-1.json
[ -f "$iso" ] || { echo "make.sh: $iso missing: apt-get install iso-codes" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent world-atlas@2.0.2 >/dev/null && tar xzf world-atlas-2.0.2.tgz)
(cd "$here" && go run ./gen "$tmp/package/countries-10m.json" "$iso" countries.bin.gz)
