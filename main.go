// Command eudr is the EUDR compliance appliance: one binary that screens
// plots, registers batches, anchors shipment links in a verifiable ledger and
// files due-diligence statements, with signed webhooks for every step.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"golang.org/x/term"

	"github.com/eudr/eudr/server"
	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/listen"
	"github.com/eudr/eudr/server/setting"
	"github.com/eudr/eudr/storage"
)

// version is set at build time: -ldflags "-X main.version=...".
var version = "dev"

const usage = `eudr: the EUDR compliance appliance

Usage:
  eudr serve [--config FILE]
  eudr admin create-key [--config FILE] --env sandbox|production [--org ORG] [--name NAME] [--scopes read,write]
  eudr admin backup [--config FILE] FILE
  eudr admin reset-password [--config FILE] [--user admin]
  eudr admin create-user [--config FILE] [--org ORG] --username U --role admin|reader
                         [--appliance-admin]
  eudr layers import [--config FILE] [--env production|sandbox] --name N
                     --kind deforestation|protected_area|forest_cover_2020
                     --version V --source S [--coverage FILE] FILE
                     (FILE and the --coverage FILE: GeoJSON FeatureCollections of Polygon
                     and MultiPolygon features, [longitude, latitude] in WGS84)
  eudr layers import [--config FILE] [--env production|sandbox] --name N
                     --kind forest-2020|loss-year|alerts --version V --source S --raster DIR
  eudr ledger verify [--config FILE] [--key VERIFIER_KEY] [--checkpoint FILE]...
  eudr webhooks listen [--url URL] [--api-key KEY] [--events TYPE,...] [--listen ADDR]
                       [--forward-to URL] [--json]
  eudr version

Settings come from the embedded defaults, then --config FILE, then EUDR_*
environment variables (see config.example.yaml). webhooks listen is a client
of a running sandbox instead: EUDR_URL and EUDR_API_KEY stand for --url and
--api-key.
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one subcommand and returns the process exit code: 0 on
// success, 1 on failure, 2 on bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "admin":
		if len(args) < 2 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		switch args[1] {
		case "create-key":
			err = createKey(ctx, args[2:], stdout, stderr)
		case "backup":
			err = backup(ctx, args[2:], stdout, stderr)
		case "reset-password":
			err = resetPassword(ctx, args[2:], stdout, stderr)
		case "create-user":
			err = createUser(ctx, args[2:], stdout, stderr)
		default:
			err = usageError(fmt.Sprintf("unknown admin command %q", args[1]))
		}
	case "layers":
		if len(args) < 2 || args[1] != "import" {
			fmt.Fprint(stderr, usage)
			return 2
		}
		err = importLayer(ctx, args[2:], stdout, stderr)
	case "ledger":
		if len(args) < 2 || args[1] != "verify" {
			fmt.Fprint(stderr, usage)
			return 2
		}
		err = verifyLedger(args[2:], stdout, stderr)
	case "webhooks":
		if len(args) < 2 || args[1] != "listen" {
			fmt.Fprint(stderr, usage)
			return 2
		}
		err = listenWebhooks(ctx, args[2:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = usageError(fmt.Sprintf("unknown command %q", args[0]))
	}
	var ue usageError
	var help helpRequested
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		help.print(stdout)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "eudr: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(stderr, "eudr: %v\n", err)
		return 1
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

// newFlags returns a flag set with --config, which every subcommand takes.
func newFlags(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs, fs.String("config", "", "config file (YAML)")
}

// parse parses a subcommand's arguments. Flags may come before or after
// its arguments (backup FILE --config C); after "--" everything is an
// argument. --help or -h is answered with the subcommand's usage on
// stdout and exit code 0 (helpRequested).
func parse(fs *flag.FlagSet, args []string) error {
	flags, rest := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		flags, rest = args[:i], args[i+1:]
	}
	var positional []string
	for {
		if err := fs.Parse(flags); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return helpRequested{fs}
			}
			return usageError(err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		flags = fs.Args()[1:]
	}
	// Leave the arguments where fs.Args finds them.
	return fs.Parse(append([]string{"--"}, append(positional, rest...)...))
}

// helpRequested is parse's answer to --help: print writes the subcommand's
// usage lines and its flags.
type helpRequested struct{ fs *flag.FlagSet }

func (h helpRequested) Error() string { return "help requested" }

// print writes the usage lines of the subcommand (those of usage naming
// it, with their continuation lines) and its flags with their defaults.
func (h helpRequested) print(w io.Writer) {
	fmt.Fprintln(w, "Usage:")
	name, in := h.fs.Name(), false
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  eudr "):
			in = strings.Contains(line+" ", " "+name+" ")
		case strings.HasPrefix(line, "    "): // a continuation line
		default:
			in = false
		}
		if in {
			fmt.Fprintln(w, line)
		}
	}
	fmt.Fprintln(w, "\nFlags:")
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("serve")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("serve takes no arguments")
	}
	cfg, err := config.Load(*configFile, os.Environ())
	if err != nil {
		config.LogUnknownEnv(consoleLog(stderr), os.Environ()) // a misspelt variable may be why
		return err
	}
	log, err := server.NewLogger(cfg.Log, stdout)
	if err != nil {
		return err
	}
	config.LogUnknownEnv(log, os.Environ())
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(signals)
	ctx, stop := stopOnSignals(ctx, signals, log, cfg.ShutdownTimeout, os.Exit)
	defer stop()
	app, err := server.New(cfg, server.Options{Version: version, Logger: log})
	if err != nil {
		return err
	}
	return app.Run(ctx)
}

func createKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("create-key")
	org := fs.String("org", "default", "organisation")
	env := fs.String("env", "", "environment: sandbox or production")
	name := fs.String("name", "", "a name to recognise the key by")
	scopes := fs.String("scopes", "read,write", "comma-separated scopes: read, write")
	if err := parse(fs, args); err != nil {
		return err
	}
	kr, err := account.ParseKeyRequest(*org, *name, *env, strings.Split(*scopes, ","))
	if err != nil {
		return usageError(err.Error())
	}
	cfg, err := loadConfig(*configFile, stderr)
	if err != nil {
		return err
	}
	app, err := openStopped(cfg, "or create the key through the API (POST /api/v1/enterprise/api-keys)")
	if err != nil {
		return err
	}
	defer app.Close()
	_, value, err := app.Accounts().IssueKey(ctx, kr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, value)
	return nil
}

// openStopped opens a stopped appliance's data dir for an admin command;
// alternative says what to do instead while it runs.
func openStopped(cfg *config.Config, alternative string) (*server.Admin, error) {
	admin, err := server.OpenAdmin(cfg, server.Options{Version: version, Logger: consoleLog(os.Stderr)})
	if errors.Is(err, storage.ErrInUse) {
		return nil, fmt.Errorf("%w: stop the appliance first, %s", err, alternative)
	}
	return admin, err
}

// consoleLog is the log of an admin command: warnings and errors, for a
// person to read, on w (stderr).
func consoleLog(w io.Writer) zerolog.Logger {
	log, _ := server.NewLogger(config.LogConfig{Level: "warn", Format: "console"}, w) // a valid level
	return log
}

// loadConfig loads the settings of an admin command from file and the
// environment, and warns on stderr of EUDR_ variables that are no setting
// (loaded or not: a misspelt variable may be why they are not).
func loadConfig(file string, stderr io.Writer) (*config.Config, error) {
	cfg, err := config.Load(file, os.Environ())
	config.LogUnknownEnv(consoleLog(stderr), os.Environ())
	return cfg, err
}

func resetPassword(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("reset-password")
	user := fs.String("user", "admin", "the user whose password to reset")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("reset-password takes no arguments")
	}
	cfg, err := loadConfig(*configFile, stderr)
	if err != nil {
		return err
	}
	app, err := openStopped(cfg, "then run this again")
	if err != nil {
		return err
	}
	defer app.Close()
	password, file, err := app.Accounts().ResetPassword(ctx, *user)
	if password != "" {
		fmt.Fprintln(stdout, password) // set even when only the file could not be rewritten
	}
	if err != nil {
		return err
	}
	if file != "" {
		fmt.Fprintf(stderr, "%s now holds the new password too\n", file)
	}
	return nil
}

// createUser adds a user with a generated password, printed once.
func createUser(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("create-user")
	org := fs.String("org", account.DefaultOrg, "organisation (made when new)")
	username := fs.String("username", "", "the name the user signs in with")
	role := fs.String("role", "", "admin (writes, manages keys and users) or reader (reads only)")
	applianceAdmin := fs.Bool("appliance-admin", false, "may take backups, manage reference layers and the users of every organisation")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("create-user takes no arguments")
	}
	ur, err := account.ParseUserRequest(*org, *username, *role, *applianceAdmin)
	var se *apierr.Error
	if errors.As(err, &se) {
		flags := map[string]string{"org": "--org", "username": "--username", "role": "--role", "applianceAdmin": "--appliance-admin"}
		var msgs []string
		for _, d := range se.Details {
			msgs = append(msgs, flags[d.Field]+" "+d.Issue)
		}
		return usageError(strings.Join(msgs, "; "))
	}
	cfg, err := loadConfig(*configFile, stderr)
	if err != nil {
		return err
	}
	app, err := openStopped(cfg, "or create the user through the API (POST /api/v1/enterprise/users)")
	if err != nil {
		return err
	}
	defer app.Close()
	password, err := app.Accounts().AddUser(ctx, ur)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, password)
	return nil
}

func backup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("backup")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("backup takes one argument: the file to write")
	}
	cfg, err := loadConfig(*configFile, stderr)
	if err != nil {
		return err
	}
	n, hot, err := server.Backup(ctx, cfg, fs.Arg(0))
	if err != nil {
		return err
	}
	how := "from the stopped data dir"
	if hot {
		how = "from the running appliance"
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes, %s)\n", fs.Arg(0), n, how)
	fmt.Fprintln(stdout, "the key files (ledger.key_file, eu_system.key_file) are not in it: keep copies of them too")
	return nil
}

// importLayer imports a reference layer into a stopped appliance's store,
// for the screening of one environment, and prints its ID and feature
// count.
func importLayer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("layers import")
	envName := fs.String("env", string(storage.Production), "environment whose screening uses the layer: production or sandbox (in addition to its fixture layers)")
	name := fs.String("name", "", "layer name")
	kind := fs.String("kind", "", "deforestation, protected_area or forest_cover_2020 (GeoJSON FILE); forest-2020, loss-year or alerts (--raster DIR)")
	ver := fs.String("version", "", "layer version")
	source := fs.String("source", "", "where the layer comes from")
	coverageFile := fs.String("coverage", "", "the areas the layer has data for: a GeoJSON FeatureCollection of Polygon and MultiPolygon features "+
		"([longitude, latitude] in WGS84), as FILE is; required for deforestation, else the bounding box of FILE's features; not with --raster")
	rasterDir := fs.String("raster", "", "folder of the GeoTIFF tiles of a raster layer (read in place, headers only)")
	if err := parse(fs, args); err != nil {
		return err
	}
	env, err := layer.ParseEnvironment(*envName)
	switch {
	case err != nil:
		return usageError("--env " + err.Error())
	case *rasterDir != "" && fs.NArg() != 0:
		return usageError("layers import takes either --raster DIR or one GeoJSON file")
	case *rasterDir == "" && fs.NArg() != 1:
		return usageError("layers import takes one GeoJSON file, or --raster DIR")
	}
	cfg, err := loadConfig(*configFile, stderr)
	if err != nil {
		return err
	}
	lr := layer.Request{Name: *name, Kind: *kind, Version: *ver, Source: *source, RasterField: "--raster", Env: env}
	if *rasterDir != "" {
		// Tiles stay where they are: the store records the folder.
		if lr.RasterDir, err = filepath.Abs(*rasterDir); err != nil {
			return err
		}
	} else if lr.Features, err = readWithProgress(fs.Arg(0), stderr); err != nil {
		return err
	}
	if *coverageFile != "" {
		if lr.Coverage, err = os.ReadFile(*coverageFile); err != nil {
			return err
		}
	}
	app, err := openStopped(cfg, "or import the layer through the API (POST /api/v1/enterprise/layers)")
	if err != nil {
		return err
	}
	defer app.Close()
	l, err := app.Layers().Import(ctx, lr)
	var se *apierr.Error
	if errors.As(err, &se) && len(se.Details) > 0 {
		var b strings.Builder
		b.WriteString("the layer is not valid:")
		for _, d := range se.Details {
			fmt.Fprintf(&b, "\n  %s: %s: %s", d.Field, d.Code, d.Issue)
		}
		return errors.New(b.String())
	}
	if err != nil {
		return err
	}
	if l.Raster != nil {
		unit := "tiles"
		if len(l.Raster.Tiles) == 1 {
			unit = "tile"
		}
		fmt.Fprintf(stdout, "%s %d %s\n", l.ID, len(l.Raster.Tiles), unit)
		return nil
	}
	fmt.Fprintf(stdout, "%s %d\n", l.ID, l.FeatureCount)
	return nil
}

// verifyLedger checks every ledger log of a stopped appliance's store
// offline, read-only, and fails naming the first bad entry or checkpoint.
// --key checks against a verifier key obtained earlier instead of the one
// the store records; each --checkpoint FILE, a signed checkpoint kept
// outside the appliance, must still match its log.
func verifyLedger(args []string, stdout, stderr io.Writer) error {
	fs, configFile := newFlags("ledger verify")
	key := fs.String("key", "", "verifier key to check signatures with (default: the one the store records)")
	var checkpoints []string
	fs.Func("checkpoint", "a signed checkpoint file the log must still match (repeatable)", func(s string) error {
		checkpoints = append(checkpoints, s)
		return nil
	})
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError("ledger verify takes no arguments")
	}
	cfg, err := loadConfig(*configFile, stderr)
	if err != nil {
		return err
	}
	trusted := map[string][]byte{}
	for _, f := range checkpoints {
		if trusted[f], err = os.ReadFile(f); err != nil {
			return err
		}
	}
	db, err := storage.Open(cfg.DataDir, storage.Options{ReadOnly: true})
	if errors.Is(err, storage.ErrInUse) {
		return fmt.Errorf("%w: stop the appliance first, or check proofs through the API (GET /api/v1/enterprise/eudr/ledger/...)", err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(context.Background(), func(tx *storage.Tx) error {
		return anchor.Verify(tx, *key, trusted, stdout)
	})
}

// listenWebhooks receives the sandbox's webhook deliveries on this machine
// (package listen) until SIGINT or SIGTERM, then deletes its subscription
// and exits 0.
func listenWebhooks(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("webhooks listen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := listen.Options{Version: version, Stdout: stdout, Stderr: stderr}
	fs.StringVar(&o.BaseURL, "url", "", "base URL of the sandbox listener (default $"+setting.EnvURL+", else "+listen.DefaultURL+")")
	fs.StringVar(&o.APIKey, "api-key", "", "a sandbox API key, sk_test_..., with write scope (default $"+setting.EnvAPIKey+")")
	events := fs.String("events", "", "comma-separated event types to subscribe to (default: all)")
	fs.StringVar(&o.Listen, "listen", listen.DefaultListen, "address of the local HTTPS receiver (port 0: any free one)")
	fs.StringVar(&o.ForwardTo, "forward-to", "", "http(s) URL each verified delivery is POSTed to as well, with its headers")
	fs.BoolVar(&o.JSON, "json", false, "print each delivery as one JSON line (default: a summary line and the body)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("webhooks listen takes no arguments")
	}
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv(setting.EnvURL)
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv(setting.EnvAPIKey)
	}
	for _, et := range strings.Split(*events, ",") {
		if et = strings.TrimSpace(et); et != "" {
			o.Events = append(o.Events, et)
		}
	}
	if err := o.Check(); err != nil {
		return usageError(err.Error())
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return listen.Run(ctx, o)
}

// readWithProgress reads a file, showing the percentage read on stderr
// when it is a terminal.
func readWithProgress(path string, stderr io.Writer) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tty, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(tty.Fd())) {
		return io.ReadAll(f)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	total := st.Size()
	buf := make([]byte, 0, total+1)
	chunk := make([]byte, 1<<20)
	last := -1
	for {
		n, err := f.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if pct := int(100 * int64(len(buf)) / max(total, 1)); pct != last && pct <= 100 {
			fmt.Fprintf(stderr, "\rreading %s: %3d%%", path, pct)
			last = pct
		}
		if err == io.EOF {
			fmt.Fprintln(stderr)
			return buf, nil
		}
		if err != nil {
			fmt.Fprintln(stderr)
			return nil, err
		}
	}
}
