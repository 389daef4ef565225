package docsui

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/webasset"
)

// The vendored files are exactly those vendor.sh took from the npm package:
// an edit by hand (or a partial upgrade) shows up here.
func TestVendoredFilesMatchVersion(t *testing.T) {
	record, err := files.ReadFile("swagger-ui/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(record), "\n"); first != "swagger-ui-dist "+SwaggerUIVersion {
		t.Errorf("swagger-ui/VERSION starts %q, want swagger-ui-dist %s (SwaggerUIVersion)", first, SwaggerUIVersion)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(record))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			continue
		}
		data, err := files.ReadFile("swagger-ui/" + name)
		if err != nil {
			t.Errorf("%s is listed in VERSION but not embedded: %v", name, err)
			continue
		}
		got := sha256.Sum256(data)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("swagger-ui/%s: sha256 %x, VERSION records %s: re-run vendor.sh", name, got, sum)
		}
		checked++
	}
	if checked != 5 {
		t.Errorf("VERSION lists %d files, want the 5 vendor.sh takes", checked)
	}
}

func TestNew(t *testing.T) {
	r, err := New("/docs", "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	page := string(r.Page().Data)
	if ct := r.Page().Header["Content-Type"]; ct != "text/html; charset=utf-8" {
		t.Errorf("the page's Content-Type is %q", ct)
	}
	for _, f := range r.Files() {
		if f.Header["Content-Security-Policy"] != Policy || f.Header["Content-Length"] != strconv.Itoa(len(f.Data)) {
			t.Errorf("%s: headers %v", f.Name, f.Header)
		}
		if f.Header["Cache-Control"] != webasset.CacheForever {
			continue
		}
		// Every hashed file is linked from the page, and its name
		// carries the hash of what it serves.
		if !strings.Contains(page, `"/docs/`+f.Name+`"`) {
			t.Errorf("the page does not link to /docs/%s", f.Name)
		}
		sum := sha256.Sum256(f.Data)
		if !strings.Contains(f.Name, "."+hex.EncodeToString(sum[:6])+".") {
			t.Errorf("%s does not carry the hash of its content", f.Name)
		}
	}
	for _, name := range []string{"swagger-ui-bundle.js.LICENSE.txt", "swagger-ui-LICENSE.txt", "swagger-ui-NOTICE.txt", "swagger-ui-VERSION.txt"} {
		if f, ok := r.File(name); !ok || f.Header["Cache-Control"] != webasset.CacheRevalidate || len(f.Data) == 0 {
			t.Errorf("File(%q) = %v, %v; want the text, revalidated", name, ok, f.Header)
		}
	}
	if _, ok := r.File("swagger-ui-bundle.js"); ok {
		t.Error("the bundle is also served under its plain name, which browsers would keep for a year across upgrades")
	}
	if !strings.Contains(page, `data-openapi-url="/api/v1/openapi.json"`) {
		t.Error("the page does not point the viewer at the document")
	}
	if !strings.Contains(page, "Swagger UI "+SwaggerUIVersion) {
		t.Error("the page does not name the Swagger UI version")
	}
}
