package main_test

// The API reference at /docs, read in a real browser: a headless Chromium
// opens the page on a running `eudr serve`, the viewer renders the
// appliance's own OpenAPI document, and not one request of the page leaves
// the appliance.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/eudr/eudr/server/apitest"
)

// chromiumPath finds the browser. Without one the test is skipped on a
// developer's machine, and fails under CI (CI set), which installs it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("chromium is not installed (apt-get install chromium): the browser test of /docs is skipped; with CI set it fails instead")
	}
	t.Fatal("chromium is not installed, and CI is set: .ci/run installs it (apt-get install chromium)")
	return ""
}

// pageActivity is what the page did, as the browser reported it.
type pageActivity struct {
	mu       sync.Mutex
	requests []string // URL of every request, in order
	blocked  []string // URL and reason of every request the browser refused
	problems []string // console errors, uncaught exceptions, policy violations
}

func (a *pageActivity) record(ev any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		a.requests = append(a.requests, e.Request.URL)
	case *network.EventLoadingFailed:
		if e.BlockedReason != "" {
			a.blocked = append(a.blocked, fmt.Sprintf("request %s blocked: %s", e.RequestID, e.BlockedReason))
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			a.problems = append(a.problems, fmt.Sprintf("log (%s): %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *runtime.EventExceptionThrown:
		a.problems = append(a.problems, "exception: "+e.ExceptionDetails.Text+" "+e.ExceptionDetails.URL)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var args []string
			for _, arg := range e.Args {
				args = append(args, string(arg.Value)+arg.Description)
			}
			a.problems = append(a.problems, "console.error: "+strings.Join(args, " "))
		}
	}
}

// fatal ends t with what failed and err, and what the page requested and
// logged until then: what a failed step in a browser test needs to be read.
func (a *pageActivity) fatal(t *testing.T, what string, err error) {
	t.Helper()
	requests, _, problems := a.snapshot()
	t.Fatalf("%s: %v\nrequests: %v\nproblems: %v", what, err, requests, problems)
}

func (a *pageActivity) snapshot() (requests, blocked, problems []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests), slices.Clone(a.blocked), slices.Clone(a.problems)
}

// operationSummaries reads the document the appliance serves: the summary
// of every operation, by "METHOD /path", and the number of its webhooks.
func operationSummaries(t *testing.T, baseURL string) (summaries map[string]string, webhooks int) {
	t.Helper()
	type operation struct {
		Summary string `json:"summary"`
	}
	var doc struct {
		// A path item also holds parameters, servers...: only the
		// methods are operations.
		Paths map[string]struct {
			Get    *operation `json:"get"`
			Put    *operation `json:"put"`
			Post   *operation `json:"post"`
			Delete *operation `json:"delete"`
			Patch  *operation `json:"patch"`
		} `json:"paths"`
		Webhooks map[string]any `json:"webhooks"`
	}
	apitest.Do(t, "GET", baseURL+"/api/v1/openapi.json", nil, nil).WantStatus(t, http.StatusOK).Decode(t, &doc)
	summaries = map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range map[string]*operation{"GET": item.Get, "PUT": item.Put, "POST": item.Post, "DELETE": item.Delete, "PATCH": item.Patch} {
			if op != nil {
				summaries[method+" "+path] = op.Summary
			}
		}
	}
	return summaries, len(doc.Webhooks)
}

var spaces = regexp.MustCompile(`\s+`)

func oneLine(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

func TestAPIReference_Browser(t *testing.T) {
	chromium := chromiumPath(t)
	p := startServer(t)

	// Both listeners serve the page, without a key.
	for _, env := range []string{production, sandbox} {
		for _, path := range []string{"/docs", "/docs/"} {
			r := apitest.Do(t, "GET", p.URL(env)+path, nil, nil).WantStatus(t, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("%s: Content-Type %q, want text/html", r.Request, ct)
			}
			if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("%s: Content-Security-Policy %q, want default-src 'self'", r.Request, csp)
			}
		}
	}

	base := p.ProductionURL
	summaries, webhooks := operationSummaries(t, base)
	if len(summaries) < 10 {
		t.Fatalf("the document lists %d operations; the check below needs at least 10", len(summaries))
	}
	// The two operations a reader comes for first, named so that a
	// change to either shows up here.
	for _, op := range []string{
		"POST /api/v1/enterprise/eudr/polygons",
		"POST /api/v1/enterprise/eudr/declarations/dds/{ddsId}/submit",
	} {
		if summaries[op] == "" {
			t.Fatalf("the document has no summary for %s", op)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's sandbox refuses to run as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()

	// Listen starts the browser, tied to browserCtx (no deadline); the
	// page's actions get a generous one of their own (a loaded 2-core
	// machine starts Chromium slowly).
	activity := &pageActivity{}
	if err := chromedp.Listen(browserCtx, activity.record); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(browserCtx, 3*time.Minute)
	defer cancel()

	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(2*time.Minute))
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/docs"),
		chromedp.WaitVisible(chromedp.CSS(".opblock")),
		// Every operation and every webhook has its block, and the
		// contents sidebar, filled once they are there, links to the
		// sections of the introduction.
		poll(fmt.Sprintf(`document.querySelectorAll(".opblock-tag-section .opblock").length >= %d`, len(summaries))),
		poll(fmt.Sprintf(`document.querySelectorAll(".webhooks .opblock").length >= %d`, webhooks)),
		poll(`document.querySelectorAll("#eudr-contents a").length > 10`),
		chromedp.WaitVisible(chromedp.CSS("#eudr-contents")),
	)
	requests, _, problems := activity.snapshot()
	if err != nil {
		t.Fatalf("the reference did not render: %v\nrequests: %v\nproblems: %v", err, requests, problems)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title != "eudr API reference" {
		t.Errorf("page title %q, want %q", title, "eudr API reference")
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	text = oneLine(text)

	// Every operation of the document is on the page, by its summary.
	missing := 0
	for _, op := range slices.Sorted(maps.Keys(summaries)) {
		if s := oneLine(summaries[op]); !strings.Contains(text, s) {
			t.Errorf("%s: its summary %q is not on the rendered page", op, s)
			missing++
		}
	}
	t.Logf("%d of %d operation summaries on the page", len(summaries)-missing, len(summaries))

	shot := screenshots(t, ctx)

	// No request left the appliance: each went to the listener the page
	// came from (data: URLs, the icons of the style sheet, stay inside
	// the browser).
	requests, blocked, problems := activity.snapshot()
	if len(requests) == 0 {
		t.Fatal("no request recorded: the network events did not arrive")
	}
	for _, u := range requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s, which is not on the appliance (%s)", u, base)
		}
	}
	if !slices.Contains(requests, base+"/api/v1/openapi.json") {
		t.Errorf("the page did not load %s/api/v1/openapi.json; requests: %v", base, requests)
	}
	// The page's own policy refused nothing: it works as served.
	for _, b := range blocked {
		t.Errorf("the browser blocked a request of the page: %s", b)
	}
	for _, pr := range problems {
		t.Errorf("the page reported a problem: %s", pr)
	}
	if t.Failed() {
		t.Logf("requests of the page: %v\nscreenshot: %s", requests, shot)
	}
}

// screenshots saves the whole page and its first screen as PNGs in the
// test's temporary directory and, when EUDR_SCREENSHOT_DIR is set, copies
// them there. It returns the path of the full-page one.
func screenshots(t *testing.T, ctx context.Context) string {
	t.Helper()
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	if err != nil {
		t.Fatalf("full-page screenshot: %v", err)
	}
	top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("EUDR_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	var fullPath string
	for _, d := range dirs {
		for name, png := range map[string][]byte{"docs-full-page.png": full, "docs-first-screen.png": top} {
			path := filepath.Join(d, name)
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			if name == "docs-full-page.png" {
				fullPath = path
			}
		}
	}
	t.Logf("screenshots of /docs in %s", strings.Join(dirs, " and "))
	return fullPath
}
