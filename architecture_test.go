package main_test

// The architecture's rules (docs/architecture.md), checked on the source:
// which packages may import which, and how long a file may grow.

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/eudr/eudr"

// workflows are the packages that each own one workflow: they meet
// through storage records and function values, never by importing each
// other.
var workflows = []string{"account", "batch", "dds", "layer", "polygon", "report", "sd", "shipment", "webhook"}

// foundations are what the workflows build on: below every workflow.
var foundations = []string{"server/apierr", "server/event", "server/work", "server/anchor", "server/risk", "server/euis"}

// speakHTTP are the packages below server that may import net/http
// besides server itself, none of them a workflow: the test harness, the EU
// system's client, the client of the sandbox's API that
// `eudr webhooks listen` is (it receives deliveries too), and the metrics,
// which serve their own listener.
var speakHTTP = []string{"server/apitest", "server/euis", "server/listen", "server/metrics"}

// goPackages maps each package directory of the repository (relative,
// slash-separated; "." for the root) to the imports of its non-test files.
func goPackages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if _, ok := pkgs[dir]; !ok {
			pkgs[dir] = nil
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(pkgs[dir], ip) {
				pkgs[dir] = append(pkgs[dir], ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// ours is the repository directory of an import path of this module, or "".
func ours(importPath string) string {
	if importPath == module {
		return "."
	}
	if rest, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return rest
	}
	return ""
}

func isWorkflow(dir string) bool {
	return strings.HasPrefix(dir, "server/") && slices.Contains(workflows, path.Base(dir)) && path.Dir(dir) == "server"
}

func TestArchitecture_Imports(t *testing.T) {
	pkgs := goPackages(t)
	for dir, imports := range pkgs {
		for _, imp := range imports {
			to := ours(imp)
			switch {
			case to == "server" && dir != ".":
				t.Errorf("%s imports server: nothing below main may", dir)
			case imp == "net/http" && strings.HasPrefix(dir, "server/") && !slices.Contains(speakHTTP, dir):
				t.Errorf("%s imports net/http: only server and %v speak HTTP", dir, speakHTTP)
			case isWorkflow(dir) && isWorkflow(to):
				t.Errorf("workflow %s imports workflow %s: workflows meet through storage records and function values", dir, to)
			case slices.Contains(foundations, dir) && (isWorkflow(to) || to == "server"):
				t.Errorf("%s imports %s: the packages workflows build on must not depend on them", dir, to)
			}
			// geo, ledger, queue and storage know nothing of ours but
			// their own subpackages.
			for _, base := range []string{"geo", "ledger", "queue", "storage"} {
				if (dir == base || strings.HasPrefix(dir, base+"/")) && to != "" && to != base && !strings.HasPrefix(to, base+"/") {
					t.Errorf("%s imports %s: %s depends on nothing of ours", dir, to, base)
				}
			}
		}
	}
	// The rules above would hold vacuously for packages that are not there.
	for _, w := range workflows {
		if _, ok := pkgs["server/"+w]; !ok {
			t.Errorf("no package server/%s", w)
		}
	}
}

// Files stay small enough to read: a file past its bound holds two things
// and is split along them. The server package, the HTTP edge over the
// workflows, stays thin: on average at most linesPerRoute lines for each
// route it serves (its handler, and its share of the middleware, auth and
// encoding every route uses). A handler decodes, calls one method of a
// workflow and encodes; logic past that belongs in the workflow.
func TestArchitecture_Size(t *testing.T) {
	const maxLines, maxTestLines, linesPerRoute = 600, 1200, 56
	routes, err := os.ReadFile("server/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	nRoutes := len(regexp.MustCompile(`(?m)^\s*\{"(GET|POST|PUT|PATCH|DELETE)", `).FindAll(routes, -1))
	maxServerLines := linesPerRoute * nRoutes
	serverLines := 0
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n := bytes.Count(data, []byte("\n"))
		max := maxLines
		if strings.HasSuffix(p, "_test.go") {
			max = maxTestLines
		} else if filepath.ToSlash(filepath.Dir(p)) == "server" {
			serverLines += n
		}
		if n > max {
			t.Errorf("%s has %d lines, over %d: split it along what it holds", p, n, max)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if nRoutes < 50 {
		t.Fatalf("server/routes.go lists %d routes: the count of its route table is broken", nRoutes)
	}
	if serverLines == 0 || serverLines > maxServerLines {
		t.Errorf("package server has %d lines of non-test code for %d routes, want at most %d (%d a route): workflows belong in their packages",
			serverLines, nRoutes, maxServerLines, linesPerRoute)
	}
}
