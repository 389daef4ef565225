// Package webasset holds what the appliance's browser pages (the API
// reference and the operator console) share about serving their files:
// each file with the headers it goes out with, content-hashed names that
// browsers may keep for good, and the caching that goes with each.
package webasset

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
)

// Cache-Control values: a file under a hashed name never changes; a page
// and the licence texts are revalidated, so an upgrade is seen at once.
const (
	CacheForever    = "public, max-age=31536000, immutable"
	CacheRevalidate = "no-cache"
)

// contentTypes are the media types of the files, by extension.
var contentTypes = map[string]string{
	".html":    "text/html; charset=utf-8",
	".js":      "text/javascript; charset=utf-8",
	".css":     "text/css; charset=utf-8",
	".svg":     "image/svg+xml",
	".geojson": "application/geo+json",
	".txt":     "text/plain; charset=utf-8",
}

// File is a page or one file it uses, with the headers it is served with.
type File struct {
	Name   string // the last path segment it is served under; "" for a page
	Data   []byte
	Header map[string]string
}

// New is the file name with data, of the media type of ext, served with
// cache and the Content-Security-Policy policy.
func New(name, ext string, data []byte, cache, policy string) File {
	return File{Name: name, Data: data, Header: map[string]string{
		"Content-Type":            contentTypes[ext],
		"Content-Length":          strconv.Itoa(len(data)),
		"Cache-Control":           cache,
		"Content-Security-Policy": policy,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
	}}
}

// HashedName puts the first 12 hex digits of data's SHA-256 before the
// extension: app.js -> app.0123456789ab.js.
func HashedName(base string, data []byte) string {
	sum := sha256.Sum256(data)
	ext := path.Ext(base)
	return strings.TrimSuffix(base, ext) + "." + hex.EncodeToString(sum[:6]) + ext
}
