package main_test

// The documentation's rules, checked on the files: the README stays a short
// front door, every link between documents leads somewhere, and no document
// cites a file that is not in the repository.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMaxBytes keeps the README a front door; the reference is in docs/.
const readmeMaxBytes = 15 * 1024

// documents are the files users read: the README, docs/, the example
// configuration, the examples and the OpenAPI document the binary serves.
func documents(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "config.example.yaml", "server/openapi.json"}
	for _, pattern := range []string{"docs/*.md", "examples/*", "examples/*/*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			// A folder of examples (examples/data) is not a document; its
			// README is.
			if info, err := os.Stat(f); err == nil && !info.IsDir() {
				files = append(files, f)
			}
		}
	}
	return files
}

func TestDocs_ReadmeIsShort(t *testing.T) {
	info, err := os.Stat("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, over %d: move reference text to docs/", info.Size(), readmeMaxBytes)
	}
}

// markdownLink is a link target in Markdown: [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading is a Markdown heading line.
var heading = regexp.MustCompile(`(?m)^#+ (.+)$`)

// anchor is the id GitHub gives a heading: lower case, punctuation but
// hyphens and underscores dropped, spaces as hyphens.
func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Every relative link of a Markdown document leads to a file of the
// repository, and every #anchor to a heading of that file.
func TestDocs_LinksResolve(t *testing.T) {
	for _, doc := range documents(t) {
		if !strings.HasSuffix(doc, ".md") {
			continue
		}
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Errorf("%s links to %s: no such file in the repository", doc, target)
				continue
			}
			if frag == "" {
				continue
			}
			if info.IsDir() {
				t.Errorf("%s links to %s: an anchor in a folder", doc, target)
				continue
			}
			linked, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, h := range heading.FindAllStringSubmatch(string(linked), -1) {
				if anchor(h[1]) == frag {
					found = true
				}
			}
			if !found {
				t.Errorf("%s links to %s: %s has no heading with that anchor", doc, target, path)
			}
		}
	}
}

// The project's own contract documents live outside the repository: what
// users read must stand on its own.
func TestDocs_CiteNothingOutsideTheRepository(t *testing.T) {
	outside := regexp.MustCompile(`\b(SPEC|API|DESIGN|STYLE)\.md\b|\.\./shared/`)
	for _, doc := range documents(t) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d cites %s, which is not in the repository", doc, i+1, m)
			}
		}
	}
}
