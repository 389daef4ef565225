package main_test

// A small WebDriver BiDi client, to drive Firefox in the console's browser
// tests. Firefox speaks BiDi itself (no geckodriver): started with
// --remote-debugging-port it prints the address of its websocket, where a
// client sends JSON commands with ids and receives their answers and the
// events it subscribed to. Only the commands the tests use are here.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// firefoxPath finds Firefox. Without it the test is skipped on a
// developer's machine, and fails under CI (CI set), which installs it.
func firefoxPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"firefox-esr", "firefox"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("firefox is not installed (apt-get install firefox-esr): the Firefox browser test is skipped; with CI set it fails instead")
	}
	t.Fatal("firefox is not installed, and CI is set: .ci/run installs it (apt-get install firefox-esr)")
	return ""
}

// firefoxPrefs go to the profile's user.js: they turn off what Firefox
// would fetch for itself (telemetry, updates, experiments), which a test
// machine without the internet only answers with errors in its output.
const firefoxPrefs = `
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("toolkit.telemetry.enabled", false);
user_pref("app.normandy.enabled", false);
user_pref("app.update.disabledForTesting", true);
user_pref("browser.safebrowsing.update.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("messaging-system.rsexperimentloader.enabled", false);
`

// xDisplay is an X display for Firefox: the DISPLAY of the environment, or
// else a virtual one (Xvfb) started for the test. Headless Firefox shows
// nothing on it, but needs one for WebGL, which the console's map draws
// with: at startup Firefox on Linux probes the graphics drivers on the X
// display (glxtest), and uses EGL, the only way it has to WebGL without a
// window, only if that probe could use EGL. Without a display the probe
// fails, and every WebGL context fails too ("Exhausted GL driver
// options"); no preference overrides that. With one, Mesa's software
// renderer (llvmpipe) draws, as SwiftShader does for Chromium.
func xDisplay(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("DISPLAY"); d != "" {
		return d
	}
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("Xvfb is not installed (apt-get install xvfb): Firefox draws WebGL only with an X display, the Firefox browser test is skipped; with CI set it fails instead")
		}
		t.Fatal("Xvfb is not installed, and CI is set: .ci/run installs it (apt-get install xvfb)")
	}
	// Xvfb picks a free display and writes its number on fd 3 when ready.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(xvfb, "-displayfd", "3", "-screen", "0", "1400x1000x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	number, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("Xvfb did not tell its display (%v)", err)
	}
	return ":" + strings.TrimSpace(number)
}

// firefox is a headless Firefox driven over WebDriver BiDi, on one tab.
type firefox struct {
	t        *testing.T
	ctx      context.Context
	conn     *websocket.Conn
	tab      string        // the browsing context the test drives
	activity *pageActivity // where the page's requests and errors go

	mu      sync.Mutex
	nextID  int
	pending map[int]chan bidiAnswer
	readErr error // why the connection ended, once it has
}

type bidiAnswer struct {
	Type    string          `json:"type"` // "success", "error" or "event"
	ID      *int            `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

var bidiListening = regexp.MustCompile(`WebDriver BiDi listening on (ws://\S+)`)

// startFirefox starts a headless Firefox on a profile of its own, with
// prefs (user.js lines) besides firefoxPrefs, opens a BiDi session on its
// first tab, sized width×height, and records in activity every request of
// the page and every error it logs. Firefox ends with the test.
func startFirefox(t *testing.T, width, height int, activity *pageActivity, prefs ...string) *firefox {
	t.Helper()
	profile := t.TempDir()
	userJS := firefoxPrefs + strings.Join(prefs, "\n")
	if err := os.WriteFile(filepath.Join(profile, "user.js"), []byte(userJS), 0o644); err != nil {
		t.Fatal(err)
	}
	ff := firefoxPath(t)
	cmd := exec.Command(ff, "--headless", "--no-remote", "--remote-debugging-port=0", "--profile", profile, "about:blank")
	// Its own process group, to end its content processes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "DISPLAY="+xDisplay(t), "MOZ_CRASHREPORTER_DISABLE=1")
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start firefox: %v", err)
	}
	exited := make(chan struct{})
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	// Firefox's output: the address first, then kept to be shown if
	// something fails.
	var output bytes.Buffer
	var outputMu sync.Mutex
	printed := func() string {
		outputMu.Lock()
		defer outputMu.Unlock()
		return output.String()
	}
	address := make(chan string, 1)
	go func() {
		defer close(exited)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			outputMu.Lock()
			output.WriteString(lines.Text() + "\n")
			outputMu.Unlock()
			if m := bidiListening.FindStringSubmatch(lines.Text()); m != nil {
				select {
				case address <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("firefox printed:\n%s", printed())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	var ws string
	select {
	case ws = <-address:
	case <-exited:
		t.Fatalf("firefox ended before listening for WebDriver BiDi:\n%s", printed())
	case <-time.After(time.Minute):
		t.Fatalf("firefox did not listen for WebDriver BiDi within a minute:\n%s", printed())
	}
	conn, _, err := websocket.Dial(ctx, ws+"/session", nil)
	if err != nil {
		t.Fatalf("connect to firefox at %s: %v", ws, err)
	}
	conn.SetReadLimit(64 << 20) // screenshots come as one message
	f := &firefox{t: t, ctx: ctx, conn: conn, activity: activity, pending: map[int]chan bidiAnswer{}}
	go f.read()
	// Closed the polite way first; the process group is killed after.
	t.Cleanup(func() {
		end, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.callCtx(end, "browser.close", struct{}{}, nil)
		conn.CloseNow()
	})

	f.call("session.new", map[string]any{"capabilities": map[string]any{}}, nil)
	var tree struct {
		Contexts []struct {
			Context string `json:"context"`
		} `json:"contexts"`
	}
	f.call("browsingContext.getTree", map[string]any{"maxDepth": 0}, &tree)
	if len(tree.Contexts) == 0 {
		var created struct {
			Context string `json:"context"`
		}
		f.call("browsingContext.create", map[string]any{"type": "tab"}, &created)
		f.tab = created.Context
	} else {
		f.tab = tree.Contexts[0].Context
	}
	f.call("browsingContext.setViewport", map[string]any{"context": f.tab, "viewport": map[string]int{"width": width, "height": height}}, nil)
	f.call("session.subscribe", map[string]any{"events": []string{"network.beforeRequestSent", "log.entryAdded"}}, nil)
	return f
}

// recordBiDi adds what Firefox reported of the page to activity: each
// request's URL, each error logged (console.error, an uncaught exception).
func recordBiDi(activity *pageActivity, method string, params json.RawMessage) {
	var ev struct {
		Request struct {
			URL string `json:"url"`
		} `json:"request"`
		Type       string `json:"type"` // "console" or "javascript"
		Level      string `json:"level"`
		Text       string `json:"text"`
		StackTrace struct {
			CallFrames []struct {
				URL        string `json:"url"`
				LineNumber int    `json:"lineNumber"`
			} `json:"callFrames"`
		} `json:"stackTrace"`
	}
	if err := json.Unmarshal(params, &ev); err != nil {
		return
	}
	activity.mu.Lock()
	defer activity.mu.Unlock()
	switch method {
	case "network.beforeRequestSent":
		activity.requests = append(activity.requests, ev.Request.URL)
	case "log.entryAdded":
		if ev.Level != "error" {
			return
		}
		where := ""
		if frames := ev.StackTrace.CallFrames; len(frames) > 0 {
			where = fmt.Sprintf(" at %s:%d", frames[0].URL, frames[0].LineNumber+1)
		}
		activity.problems = append(activity.problems, fmt.Sprintf("%s error: %s%s", ev.Type, ev.Text, where))
	}
}

// read hands each answer to the command waiting for it and records each
// event, until the connection ends.
func (f *firefox) read() {
	for {
		_, data, err := f.conn.Read(context.Background())
		if err != nil {
			f.mu.Lock()
			f.readErr = err
			for id, ch := range f.pending {
				close(ch)
				delete(f.pending, id)
			}
			f.mu.Unlock()
			return
		}
		var a bidiAnswer
		if err := json.Unmarshal(data, &a); err != nil {
			continue
		}
		if a.Type == "event" {
			recordBiDi(f.activity, a.Method, a.Params)
			continue
		}
		if a.ID == nil {
			continue
		}
		f.mu.Lock()
		ch := f.pending[*a.ID]
		delete(f.pending, *a.ID)
		f.mu.Unlock()
		if ch != nil {
			ch <- a
		}
	}
}

// callCtx sends the command method with params and decodes its result
// into result (nil: ignored).
func (f *firefox) callCtx(ctx context.Context, method string, params, result any) error {
	f.mu.Lock()
	if f.readErr != nil {
		f.mu.Unlock()
		return fmt.Errorf("%s: the connection to firefox ended: %w", method, f.readErr)
	}
	f.nextID++
	id := f.nextID
	ch := make(chan bidiAnswer, 1)
	f.pending[id] = ch
	f.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	if err := f.conn.Write(ctx, websocket.MessageText, msg); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case a, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: the connection to firefox ended: %w", method, f.readErr)
		}
		if a.Type == "error" {
			return fmt.Errorf("%s: %s: %s", method, a.Error, a.Message)
		}
		if result != nil {
			return json.Unmarshal(a.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// call is callCtx within the browser's time, failing the test on error.
func (f *firefox) call(method string, params, result any) {
	f.t.Helper()
	if err := f.callCtx(f.ctx, method, params, result); err != nil {
		f.t.Fatal(err)
	}
}

// navigate loads url in the tab and waits until the page has loaded.
func (f *firefox) navigate(url string) error {
	return f.callCtx(f.ctx, "browsingContext.navigate", map[string]any{"context": f.tab, "url": url, "wait": "complete"}, nil)
}

// eval runs the script expr in the page, awaits its value if it is a
// promise, and decodes it into out (nil: ignored) when it is a string,
// number, boolean or null. An exception is an error, with its message.
func (f *firefox) eval(expr string, out any) error {
	var res struct {
		Type   string `json:"type"` // "success" or "exception"
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := f.callCtx(f.ctx, "script.evaluate", map[string]any{
		"expression": expr, "target": map[string]string{"context": f.tab}, "awaitPromise": true, "resultOwnership": "none",
	}, &res)
	if err != nil {
		return err
	}
	if res.Type == "exception" {
		return fmt.Errorf("the script threw: %s", res.ExceptionDetails.Text)
	}
	if out == nil {
		return nil
	}
	switch res.Result.Type {
	case "string", "number", "boolean":
		return json.Unmarshal(res.Result.Value, out)
	case "null", "undefined":
		return json.Unmarshal([]byte("null"), out)
	}
	return fmt.Errorf("the script's value is a %s, not a string, number or boolean", res.Result.Type)
}

// text is the innerText of the first element sel selects, "" if none.
func (f *firefox) text(sel string) string {
	f.t.Helper()
	var s string
	if err := f.eval(`document.querySelector(`+jsString(sel)+`)?.innerText ?? ""`, &s); err != nil {
		f.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// poll waits until expr is true in the page, checking it every 50 ms for up
// to two minutes.
func (f *firefox) poll(expr string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var ok bool
		err := f.eval(`(`+expr+`) === true`, &ok)
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still not true after 2m: %s", expr)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-f.ctx.Done():
			return errors.Join(f.ctx.Err(), fmt.Errorf("waiting for %s", expr))
		}
	}
}

// screenshot is a PNG of what the tab shows.
func (f *firefox) screenshot() []byte {
	f.t.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	f.call("browsingContext.captureScreenshot", map[string]any{"context": f.tab}, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		f.t.Fatalf("screenshot: %v", err)
	}
	return png
}
