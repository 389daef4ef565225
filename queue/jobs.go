package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
)

// Job is one unit of opaque work.
type Job struct {
	ID      string    // chosen by the caller, unique (e.g. "job_01J...")
	Kind    string    // selects the Handler
	Payload []byte    // opaque to the queue
	RunAt   time.Time // not before; zero means now
	Attempt int       // how many times it was claimed before (0 on the first run); set by the Runner
}

// jobRecord is the stored form of a Job: the job, how many times it has been
// claimed, and the due time its key in queue_jobs_due carries.
type jobRecord struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"`
	Payload []byte    `json:"payload,omitempty"`
	RunAt   time.Time `json:"run_at"`
	Attempt int       `json:"attempt"` // claims so far
	Due     time.Time `json:"due"`
}

func (rec *jobRecord) job() Job {
	return Job{ID: rec.ID, Kind: rec.Kind, Payload: rec.Payload, RunAt: rec.RunAt, Attempt: rec.Attempt}
}

var (
	errJobExists      = errors.New("job already queued")
	errNoJobBuckets   = errors.New("queue: job buckets missing (Init not called)")
	errNothingClaimed = errors.New("no job due") // rolls the claim transaction back: nothing to commit
	minJobDue         = time.Unix(0, 0)
	maxJobDue         = time.Unix(0, math.MaxInt64)
)

// Enqueue adds j in the caller's write transaction: it is durable when tx
// commits. The job becomes due at j.RunAt (at once when zero); j.Attempt is
// ignored, a queued job has not been claimed yet. It fails when j has no ID or
// Kind, when a job with j.ID is already queued, and when Init has not run.
func Enqueue(tx *bolt.Tx, j Job) error {
	if j.ID == "" || j.Kind == "" {
		return fmt.Errorf("enqueue job %q: ID and Kind are required", j.ID)
	}
	jobs, _, err := jobBuckets(tx)
	if err != nil {
		return err
	}
	if jobs.Get([]byte(j.ID)) != nil {
		return fmt.Errorf("enqueue job %s: %w", j.ID, errJobExists)
	}
	rec := &jobRecord{ID: j.ID, Kind: j.Kind, Payload: j.Payload, RunAt: j.RunAt}
	return setJobDue(tx, rec, j.RunAt, false)
}

// Complete removes job id from the queue inside the caller's transaction, so
// a handler can record its result and finish the job atomically. Completing
// a job that is not queued is not an error.
func Complete(tx *bolt.Tx, id string) error {
	rec, err := getJobRecord(tx, id)
	if err != nil || rec == nil {
		return err
	}
	return deleteJobRecord(tx, rec)
}

// Reschedule puts job id back in the queue, due at at, inside the caller's
// transaction: a handler that waits on something outside (an answer from
// another system) records where it stands and returns nil, and runs again
// then. The claim it ran under ends: the runner does not remove the job
// when the handler returns. Rescheduling a job that is not queued is an
// error.
func Reschedule(tx *bolt.Tx, id string, at time.Time) error {
	rec, err := getJobRecord(tx, id)
	if err != nil {
		return err
	}
	if rec == nil {
		return fmt.Errorf("reschedule job %s: not queued", id)
	}
	rec.Attempt++ // a new claim number: the current claim no longer matches
	rec.RunAt = at
	return setJobDue(tx, rec, at, true)
}

// Pending reports how many jobs are queued, claimed ones included (for
// health, metrics and tests); 0 when the buckets do not exist. It walks the
// job bucket, so it costs one step per queued job.
func Pending(tx *bolt.Tx) int {
	return countKeys(tx.Bucket(bucketJobs))
}

// countKeys counts b's keys with a cursor (0 for a nil bucket). Unlike
// Bucket.Stats, it sees the changes of the current write transaction.
func countKeys(b *bolt.Bucket) int {
	if b == nil {
		return 0
	}
	n := 0
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		n++
	}
	return n
}

func jobBuckets(tx *bolt.Tx) (jobs, due *bolt.Bucket, err error) {
	jobs, due = tx.Bucket(bucketJobs), tx.Bucket(bucketJobsDue)
	if jobs == nil || due == nil {
		return nil, nil, errNoJobBuckets
	}
	return jobs, due, nil
}

// getJobRecord returns the record of job id, or nil when it is not queued.
func getJobRecord(tx *bolt.Tx, id string) (*jobRecord, error) {
	jobs, _, err := jobBuckets(tx)
	if err != nil {
		return nil, err
	}
	v := jobs.Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var rec jobRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", id, err)
	}
	return &rec, nil
}

// setJobDue writes rec with due as its due time and moves its key in the due
// index there; replace says whether rec's current key must be removed first.
func setJobDue(tx *bolt.Tx, rec *jobRecord, due time.Time, replace bool) error {
	jobs, idx, err := jobBuckets(tx)
	if err != nil {
		return err
	}
	if replace {
		if err := idx.Delete(dueKey(rec.Due, rec.ID)); err != nil {
			return err
		}
	}
	switch {
	case due.IsZero() || due.Before(minJobDue):
		due = minJobDue
	case due.After(maxJobDue):
		due = maxJobDue
	}
	rec.Due = due
	v, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", rec.ID, err)
	}
	if err := idx.Put(dueKey(rec.Due, rec.ID), nil); err != nil {
		return err
	}
	return jobs.Put([]byte(rec.ID), v)
}

func deleteJobRecord(tx *bolt.Tx, rec *jobRecord) error {
	jobs, idx, err := jobBuckets(tx)
	if err != nil {
		return err
	}
	if err := idx.Delete(dueKey(rec.Due, rec.ID)); err != nil {
		return err
	}
	return jobs.Delete([]byte(rec.ID))
}

// claimedJobRecord returns the record of j while it is still the claim j was
// handed out by (no Complete since, no new claim after an expired lease), or
// nil.
func claimedJobRecord(tx *bolt.Tx, j Job) (*jobRecord, error) {
	rec, err := getJobRecord(tx, j.ID)
	if err != nil || rec == nil || rec.Attempt != j.Attempt+1 {
		return nil, err
	}
	return rec, nil
}

// claimJobs takes up to n jobs due at now from the front of the due index and
// leases them until now+lease. It returns errNothingClaimed when no job is due,
// so that the caller can roll back rather than commit an empty transaction. A
// record that cannot be decoded, or an index key that does not match its
// record, is removed and logged: it could never run.
func claimJobs(tx *bolt.Tx, now time.Time, lease time.Duration, n int, log zerolog.Logger) ([]Job, error) {
	_, idx, err := jobBuckets(tx)
	if err != nil {
		return nil, err
	}
	var keys [][]byte // collected first: the loop below moves keys the cursor would visit
	c := idx.Cursor()
	for k, _ := c.First(); k != nil && len(keys) < n; k, _ = c.Next() {
		if due, _ := parseDueKey(k); due.After(now) {
			break
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	if len(keys) == 0 {
		return nil, errNothingClaimed
	}
	var claimed []Job
	for _, k := range keys {
		due, id := parseDueKey(k)
		rec, err := getJobRecord(tx, id)
		if err != nil || rec == nil || !rec.Due.Equal(due) {
			// Undecodable record, or a key its record does not point to: drop
			// the key (and the undecodable record), since it can never run.
			log.Error().Err(err).Str("job_id", id).Bool("record_found", rec != nil).Msg("drop bad job index entry")
			if derr := idx.Delete(k); derr != nil {
				return nil, derr
			}
			if err != nil {
				if derr := tx.Bucket(bucketJobs).Delete([]byte(id)); derr != nil {
					return nil, derr
				}
			}
			continue
		}
		j := rec.job()
		rec.Attempt++
		if err := setJobDue(tx, rec, now.Add(lease), true); err != nil {
			return nil, err
		}
		claimed = append(claimed, j)
	}
	return claimed, nil
}

// moveJobLeases sets the due time of each job in jobs that is still claimed
// by that claim to due: now+lease renews a lease, now releases it.
func moveJobLeases(tx *bolt.Tx, jobs []Job, due time.Time) error {
	for _, j := range jobs {
		rec, err := claimedJobRecord(tx, j)
		if err != nil {
			return err
		}
		if rec != nil {
			if err := setJobDue(tx, rec, due, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// Handler runs one job. Returning nil completes it (if the handler did not
// call Complete itself). Returning an error (or panicking) is fatal: the job
// is removed and RunnerOptions.OnFailed is called in the same transaction.
// ctx is cancelled only when the runner stops and its drain timeout passes;
// the handler must then return soon, and its job is run again on the next
// start. Handlers must be idempotent: a job can run more than once.
type Handler func(ctx context.Context, j Job) error

// RunnerOptions configures NewRunner.
type RunnerOptions struct {
	DB           *bolt.DB
	Workers      int              // concurrent handlers; default 4
	Lease        time.Duration    // claim lease; default 1m; renewed every Lease/3 while the handler runs
	PollInterval time.Duration    // how often to look for due jobs without a Wake; default 1s
	DrainTimeout time.Duration    // after Run's ctx is done, how long in-flight handlers get before their ctx is cancelled; default 30s
	Now          func() time.Time // default time.Now
	Logger       zerolog.Logger
	// OnFailed records a fatal failure (job FAILED, job.failed event) in the
	// transaction that removes the job. May be nil. If it returns an error the
	// transaction is rolled back and the job runs again when its lease expires.
	OnFailed func(tx *bolt.Tx, j Job, err error) error
}

const jobRenewMinPeriod = time.Millisecond

// Runner claims due jobs and runs them on a bounded pool of workers.
type Runner struct {
	opts     RunnerOptions
	log      zerolog.Logger
	handlers map[string]Handler
	wake     chan struct{}

	mu       sync.Mutex
	inflight map[jobClaim]Job // claimed jobs whose outcome is not recorded yet

	claimed func(n int) // test hook: called after each successful claim pass
}

// jobClaim identifies one claim of a job: after an expired lease the same job
// can be claimed again while the first handler still runs.
type jobClaim struct {
	id      string
	attempt int
}

func claimOf(j Job) jobClaim { return jobClaim{j.ID, j.Attempt} }

// NewRunner returns a runner with opts, defaults filled in.
func NewRunner(opts RunnerOptions) *Runner {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Lease <= 0 {
		opts.Lease = time.Minute
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Runner{
		opts:     opts,
		log:      opts.Logger,
		handlers: make(map[string]Handler),
		wake:     make(chan struct{}, 1),
		inflight: make(map[jobClaim]Job),
	}
}

// Handle registers h for jobs of kind. Call it before Run. A job whose kind
// has no handler fails (OnFailed) with an error naming the kind.
func (r *Runner) Handle(kind string, h Handler) { r.handlers[kind] = h }

// Wake tells the runner a job was enqueued, so it looks for due jobs now
// rather than at the next poll. It never blocks; wakes coalesce.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run claims and runs jobs until ctx is done. It then stops claiming and
// gives in-flight handlers DrainTimeout to finish under their own context;
// after that their context is cancelled and their jobs made due again at
// once, so the next start resumes them. Run waits for every handler to
// return and returns nil on a clean stop, or an error when it cannot start.
// Store errors while running are logged and retried with backoff.
func (r *Runner) Run(ctx context.Context) error {
	if r.opts.DB == nil {
		return errors.New("queue: job runner has no DB")
	}
	// Handlers get a context of their own, cancelled only at the drain deadline.
	hctx, cutOff := context.WithCancel(context.WithoutCancel(ctx))
	defer cutOff()

	stopRenew := make(chan struct{})
	var renewWG sync.WaitGroup
	renewWG.Add(1)
	go func() {
		defer renewWG.Done()
		r.renewLoop(stopRenew)
	}()
	renewing := true
	stopRenewing := func() {
		if renewing {
			close(stopRenew)
			renewWG.Wait()
			renewing = false
		}
	}
	defer stopRenewing()

	var (
		wg      sync.WaitGroup
		done    = make(chan struct{}, r.opts.Workers) // one send per worker: never blocks
		running int
		retry   <-chan time.Time // non-nil while backing off after a store error
		backoff time.Duration
		errs    errLog
	)
	ticker := time.NewTicker(r.opts.PollInterval)
	defer ticker.Stop()
	r.log.Info().Int("workers", r.opts.Workers).Stringer("lease", r.opts.Lease).Msg("job runner started")

	for ctx.Err() == nil {
		if retry == nil && running < r.opts.Workers {
			jobs, err := r.claim(r.opts.Workers - running)
			if err != nil {
				backoff = nextBackoff(backoff)
				retry = time.After(backoff)
				errs.report(r.log, err, "claim jobs")
			} else {
				backoff = 0
			}
			for _, j := range jobs {
				running++
				wg.Add(1)
				go func() {
					defer wg.Done()
					r.work(hctx, j)
					done <- struct{}{}
				}()
			}
		}
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-ticker.C:
		case <-retry:
			retry = nil
		case <-done:
			running--
		}
	}

	r.drain(running, done, func() {
		stopRenewing()
		r.releaseInflight()
		cutOff()
	})
	wg.Wait()
	r.log.Info().Msg("job runner stopped")
	return nil
}

// drain waits for running workers to report on done. If DrainTimeout passes
// first, it calls cut (once) and goes on waiting.
func (r *Runner) drain(running int, done <-chan struct{}, cut func()) {
	if running == 0 {
		return
	}
	r.log.Info().Int("in_flight", running).Stringer("drain_timeout", r.opts.DrainTimeout).Msg("job runner draining")
	deadline := time.NewTimer(r.opts.DrainTimeout)
	defer deadline.Stop()
	timeout := deadline.C
	for running > 0 {
		select {
		case <-done:
			running--
		case <-timeout:
			timeout = nil
			r.log.Warn().Int("in_flight", running).Msg("drain timeout: cancelling job handlers")
			cut()
		}
	}
}

// releaseInflight makes the jobs still in flight due now, so that the next
// start runs them again at once.
func (r *Runner) releaseInflight() {
	jobs := r.inflightJobs()
	if err := r.opts.DB.Update(func(tx *bolt.Tx) error {
		return moveJobLeases(tx, jobs, r.opts.Now())
	}); err != nil {
		r.log.Error().Err(err).Msg("release job leases; they run again when they expire")
	}
}

// claim leases up to n due jobs in one write transaction and records them as
// in flight. A pass that finds nothing rolls back instead of committing.
func (r *Runner) claim(n int) ([]Job, error) {
	var jobs []Job
	err := r.opts.DB.Update(func(tx *bolt.Tx) error {
		var err error
		jobs, err = claimJobs(tx, r.opts.Now(), r.opts.Lease, n, r.log)
		return err
	})
	if errors.Is(err, errNothingClaimed) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	for _, j := range jobs {
		r.inflight[claimOf(j)] = j
	}
	r.mu.Unlock()
	if r.claimed != nil {
		r.claimed(len(jobs))
	}
	return jobs, nil
}

// work runs one claimed job and records its outcome.
func (r *Runner) work(ctx context.Context, j Job) {
	defer func() {
		r.mu.Lock()
		delete(r.inflight, claimOf(j))
		r.mu.Unlock()
	}()
	l := r.log.With().Str("job_id", j.ID).Str("kind", j.Kind).Int("attempt", j.Attempt).Logger()
	start := time.Now()
	herr := r.call(ctx, j, l)
	switch {
	case herr == nil:
		err := r.opts.DB.Update(func(tx *bolt.Tx) error {
			rec, err := claimedJobRecord(tx, j)
			if err != nil || rec == nil {
				return err
			}
			return deleteJobRecord(tx, rec)
		})
		if err != nil {
			l.Error().Err(err).Msg("record job done; it runs again when its lease expires")
			return
		}
		l.Debug().Float64("took_ms", float64(time.Since(start).Microseconds())/1000).Msg("job done")
	case ctx.Err() != nil:
		// Cut off at the drain deadline: Run has released the lease.
		l.Info().Err(herr).Msg("job cut off by shutdown; it runs again on the next start")
	default:
		dropped := false
		err := r.opts.DB.Update(func(tx *bolt.Tx) error {
			rec, err := claimedJobRecord(tx, j)
			if err != nil {
				return err
			}
			if dropped = rec == nil; dropped {
				return nil
			}
			if err := deleteJobRecord(tx, rec); err != nil {
				return err
			}
			if r.opts.OnFailed != nil {
				return r.opts.OnFailed(tx, j, herr)
			}
			return nil
		})
		switch {
		case err != nil:
			l.Error().Err(err).AnErr("job_error", herr).Msg("record job failure; it runs again when its lease expires")
		case dropped:
			l.Warn().Err(herr).Msg("job failed after it was completed or claimed again; failure not recorded")
		default:
			l.Warn().Err(herr).Msg("job failed")
		}
	}
}

// call runs the handler for j, turning a missing handler or a panic into an
// error.
func (r *Runner) call(ctx context.Context, j Job, l zerolog.Logger) (err error) {
	h := r.handlers[j.Kind]
	if h == nil {
		return fmt.Errorf("no handler for job kind %q", j.Kind)
	}
	defer func() {
		if p := recover(); p != nil {
			l.Error().Str("panic", fmt.Sprint(p)).Bytes("stack", debug.Stack()).Msg("job handler panicked")
			err = fmt.Errorf("job handler panicked: %v", p)
		}
	}()
	return h(ctx, j)
}

// renewLoop renews the leases of in-flight jobs every Lease/3 until stop is
// closed.
func (r *Runner) renewLoop(stop <-chan struct{}) {
	t := time.NewTicker(max(r.opts.Lease/3, jobRenewMinPeriod))
	defer t.Stop()
	var errs errLog
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		jobs := r.inflightJobs()
		if len(jobs) == 0 {
			continue
		}
		if err := r.opts.DB.Update(func(tx *bolt.Tx) error {
			return moveJobLeases(tx, jobs, r.opts.Now().Add(r.opts.Lease))
		}); err != nil {
			errs.report(r.log, err, "renew job leases")
		}
	}
}

func (r *Runner) inflightJobs() []Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	jobs := make([]Job, 0, len(r.inflight))
	for _, j := range r.inflight {
		jobs = append(jobs, j)
	}
	return jobs
}
