#!/usr/bin/env bash
# Re-fetches the vendored Swagger UI into swagger-ui/ at the pinned version
# and records what was taken in swagger-ui/VERSION. Run it from anywhere;
# needs npm (for `npm pack`) and sha256sum. To upgrade, change VERSION below
# and SwaggerUIVersion in docsui.go (docsui_test.go checks they agree), run
# it, and look at /docs in a browser
# (EUDR_SCREENSHOT_DIR=/tmp/shots go test -run TestAPIReference_Browser .).
set -euo pipefail

PACKAGE=swagger-ui-dist
VERSION=5.35.0
# The files the page uses, and the licences that come with them.
FILES=(swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css LICENSE NOTICE)

here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/swagger-ui"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cd "$work"
tarball="$(npm pack --silent "$PACKAGE@$VERSION")"
integrity="$(npm view "$PACKAGE@$VERSION" dist.integrity)"
tar -xzf "$tarball"

rm -rf "$dest"
mkdir -p "$dest"
for f in "${FILES[@]}"; do
	cp "package/$f" "$dest/$f"
done

{
	echo "$PACKAGE $VERSION"
	echo "tarball $tarball sha256 $(sha256sum "$tarball" | cut -d' ' -f1)"
	echo "npm integrity $integrity"
	echo
	echo "sha256 of each file taken from the tarball (checked by docsui_test.go):"
	(cd "$dest" && sha256sum "${FILES[@]}")
} >"$dest/VERSION"

echo "vendored $PACKAGE $VERSION into $dest"
