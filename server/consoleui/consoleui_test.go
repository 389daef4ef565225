package consoleui

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/webasset"
)

// The vendored files are exactly those vendor.sh took from npm: an edit by
// hand (or a partial upgrade) shows up here.
func TestVendoredFilesMatchVersion(t *testing.T) {
	for _, c := range []struct {
		dir, first string
		files      int
	}{
		{"maplibre", "maplibre-gl " + MapLibreVersion, 4},
		{"preact", "htm " + HTMVersion, 3},
		{"basemap", "world-atlas " + WorldAtlasVersion, 2},
	} {
		record, err := files.ReadFile(c.dir + "/VERSION")
		if err != nil {
			t.Fatal(err)
		}
		if first, _, _ := strings.Cut(string(record), "\n"); first != c.first {
			t.Errorf("%s/VERSION starts %q, want %q (the version constant)", c.dir, first, c.first)
		}
		checked := 0
		sc := bufio.NewScanner(bytes.NewReader(record))
		for sc.Scan() {
			sum, name, ok := strings.Cut(sc.Text(), "  ")
			if !ok || len(sum) != 64 {
				continue
			}
			data, err := files.ReadFile(c.dir + "/" + name)
			if err != nil {
				t.Errorf("%s/%s is listed in VERSION but not embedded: %v", c.dir, name, err)
				continue
			}
			got := sha256.Sum256(data)
			if hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s/%s: sha256 %x, VERSION records %s: re-run vendor.sh", c.dir, name, got, sum)
			}
			checked++
		}
		if checked != c.files {
			t.Errorf("%s/VERSION lists %d files, want the %d vendor.sh takes", c.dir, checked, c.files)
		}
	}
}

// The base map is small, and is country borders.
func TestBaseMap(t *testing.T) {
	data, err := files.ReadFile("basemap/countries.geojson")
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 1<<20 {
		t.Errorf("the base map is %d bytes; keep it under 1 MB", len(data))
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Properties struct{ Name string } `json:"properties"`
			Geometry   struct{ Type string } `json:"geometry"`
		} `json:"features"`
	}
	if err := json.Unmarshal(data, &fc); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fc.Features {
		names[f.Properties.Name] = true
		if f.Geometry.Type != "Polygon" && f.Geometry.Type != "MultiPolygon" {
			t.Errorf("%s: geometry %s", f.Properties.Name, f.Geometry.Type)
		}
	}
	if fc.Type != "FeatureCollection" || len(fc.Features) < 170 || !names["Brazil"] || !names["Côte d'Ivoire"] {
		t.Errorf("the base map has %d features (%s); want the world's countries", len(fc.Features), fc.Type)
	}
}

var attrURL = regexp.MustCompile(`(?:href|src|data-[a-z-]+)="([^"]*)"`)

func TestNew(t *testing.T) {
	c, err := New("/console", "/api/v1/enterprise")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range Environments {
		page := c.Page(env, NoSession)
		if ct := page.Header["Content-Type"]; ct != "text/html; charset=utf-8" {
			t.Errorf("%s: the page's Content-Type is %q", env, ct)
		}
		text := string(page.Data)
		// The page for a request with a session cookie says so, and is
		// otherwise the same page.
		for _, mark := range []Session{SessionCookie, SessionMaybe} {
			attr := `data-session="` + string(mark) + `"`
			withSession := string(c.Page(env, mark).Data)
			if !strings.Contains(withSession, attr) || strings.Replace(withSession, attr, `data-session=""`, 1) != text {
				t.Errorf("the %s page marked %s differs from the page without a session by more than data-session", env, attr)
			}
		}
		if !strings.Contains(text, `data-environment="`+env+`"`) || !strings.Contains(text, `class="env-`+env+`"`) {
			t.Errorf("the %s page does not name its environment", env)
		}
		if strings.Contains(text, "<script>") || strings.Contains(text, "style=") {
			t.Errorf("the %s page has an inline script or style, which the policy refuses", env)
		}
		// Every URL of the page is on the appliance: a file served under
		// /console/, the API or the reference.
		for _, m := range attrURL.FindAllStringSubmatch(text, -1) {
			u := m[1]
			name, isFile := strings.CutPrefix(u, "/console/")
			switch {
			case isFile:
				if _, ok := c.File(env, name, NoSession); !ok {
					t.Errorf("the %s page links to %s, which is not served", env, u)
				}
			case u == "/console#/overview" || u == "/docs" || u == "/api/v1/enterprise" || u == env:
			case strings.HasPrefix(m[0], "data-session=") && u == "":
			default:
				t.Errorf("the %s page links to %q, outside the console", env, u)
			}
		}
	}
	prod := string(c.Page("production", NoSession).Data)
	for _, f := range c.Files() {
		if f.Header["Content-Security-Policy"] != Policy || f.Header["Content-Length"] != strconv.Itoa(len(f.Data)) ||
			f.Header["Content-Type"] == "" {
			t.Errorf("%s: headers %v", f.Name, f.Header)
		}
		if f.Header["Cache-Control"] != webasset.CacheForever {
			continue
		}
		// Every hashed file is linked from the page or imported by a
		// module, and its name carries the hash of what it serves.
		if !strings.Contains(prod, `"/console/`+f.Name+`"`) && !importedByAModule(c, f.Name) {
			t.Errorf("nothing links to /console/%s", f.Name)
		}
		sum := sha256.Sum256(f.Data)
		if !strings.Contains(f.Name, "."+hex.EncodeToString(sum[:6])+".") {
			t.Errorf("%s does not carry the hash of its content", f.Name)
		}
	}
	for _, name := range []string{"maplibre-LICENSE.txt", "htm-LICENSE.txt", "preact-LICENSE.txt", "world-atlas-LICENSE.txt",
		"maplibre-VERSION.txt", "preact-VERSION.txt", "basemap-VERSION.txt"} {
		if f, ok := c.File("production", name, NoSession); !ok || f.Header["Cache-Control"] != webasset.CacheRevalidate || len(f.Data) == 0 {
			t.Errorf("File(%q) = %v, %v; want the text, revalidated", name, ok, f.Header)
		}
		if !strings.Contains(prod, `"/console/`+name+`"`) && !strings.HasSuffix(name, "VERSION.txt") {
			t.Errorf("the page does not link to the licence %s", name)
		}
	}
	for _, name := range []string{"app.js", "maplibre-gl-csp.js"} {
		if _, ok := c.File("production", name, NoSession); ok {
			t.Errorf("%s is also served under its plain name, which browsers would keep for a year across upgrades", name)
		}
	}
	if _, ok := c.File("staging", "", NoSession); ok {
		t.Error("a page for an environment that does not exist")
	}
}

// Our modules import each other by hashed name: a module under a plain
// name would not be served.
func TestModulesImportHashedNames(t *testing.T) {
	c := Must(New("/console", "/api/v1/enterprise"))
	imports := regexp.MustCompile(`from "\./([^"]+)"`)
	n := 0
	for _, f := range c.Files() {
		if !strings.HasSuffix(f.Name, ".js") || strings.HasPrefix(f.Name, "maplibre") || strings.HasPrefix(f.Name, "standalone") {
			continue
		}
		for _, m := range imports.FindAllStringSubmatch(string(f.Data), -1) {
			n++
			if _, ok := c.File("production", m[1], NoSession); !ok {
				t.Errorf("%s imports ./%s, which is not served", f.Name, m[1])
			}
		}
	}
	if n < 5 {
		t.Errorf("%d imports found in our modules; the check reads none", n)
	}
}

func importedByAModule(c *Console, name string) bool {
	for _, f := range c.Files() {
		if strings.HasSuffix(f.Name, ".js") && bytes.Contains(f.Data, []byte(`"./`+name+`"`)) {
			return true
		}
	}
	return false
}
