package batch

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// JobInput is what a batch_risk_assessment job carries. Jobs queued by
// earlier versions carry it in their queue entry; its form stays.
type JobInput struct {
	BatchID string `json:"batchId"`
}

// JobResult is the one entry of a batch job's results.
type JobResult struct {
	BatchID   string `json:"batchId"`
	Status    string `json:"status"`
	RiskScore int    `json:"riskScore"`
	RiskLevel string `json:"riskLevel"`
}

// RiskAssessment is the risk-assessment document of a batch, as recorded
// when the batch was assessed and never changed (GET
// /batches/{batchId}/risk-assessment serves it); while the batch is
// ASSESSING, only its IDs and status, the rest null and no factors.
type RiskAssessment struct {
	BatchID       string        `json:"batchId"`
	JobID         string        `json:"jobId"`
	Status        string        `json:"status"`
	RiskScore     *int          `json:"riskScore"`
	RiskLevel     *string       `json:"riskLevel"`
	MaxScore      *int          `json:"maxScore"`
	Factors       []risk.Factor `json:"factors"`
	DataVersions  *DataVersions `json:"dataVersions"`
	EngineVersion *string       `json:"engineVersion"`
	AppVersion    *string       `json:"appVersion"`
	AssessedAt    *string       `json:"assessedAt"`
}

// DataVersions names the regulatory data an assessment used.
type DataVersions struct {
	CountryBenchmark DataSet `json:"countryBenchmark"`
	AnnexI           DataSet `json:"annexI"`
}

// DataSet names one version of a regulatory data set.
type DataSet struct {
	Version string `json:"version"`
	Source  string `json:"source"`
	Date    string `json:"date"`
	SHA256  string `json:"sha256"`
}

// runAssessment assesses a batch: it reads the batch's polygons and its
// supplier's record, scores them (package risk), and in one transaction
// records the assessment, moves the batch to VERIFIED or HIGH_RISK,
// publishes batch.risk_assessed and completes the job. Run again (after a
// crash), it finds the batch assessed and only completes the job.
func (s *Service) runAssessment(ctx context.Context, t storage.Tenant, job *storage.Job, input []byte) error {
	var in JobInput
	if err := json.Unmarshal(input, &in); err != nil || in.BatchID == "" {
		return fmt.Errorf("batch job input %s: %v", input, err)
	}
	work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("batch_id", in.BatchID) })
	var b *storage.Batch
	var plots []risk.Plot
	var history risk.History
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if b, err = tx.FindBatch(t, in.BatchID); err != nil {
			return fmt.Errorf("batch %s: %w", in.BatchID, err)
		}
		if b.Status != storage.BatchAssessing {
			return nil
		}
		if plots, err = batchPlots(tx, t, b); err != nil {
			return err
		}
		counts, err := tx.SupplierPolygonCounts(t, b.SupplierID)
		history = risk.History{SupplierID: b.SupplierID, Compliant: counts[geo.StatusCompliant],
			HighRisk: counts[geo.StatusHighRisk], Failed: counts[geo.StatusFailed]}
		return err
	})
	if err != nil {
		return err
	}
	var as risk.Assessment
	if b.Status == storage.BatchAssessing {
		if as, err = risk.Assess(risk.Input{Plots: plots, Supplier: history, MaxScore: s.o.MaxScore, Benchmark: s.o.Benchmark}); err != nil {
			return fmt.Errorf("assess batch %s: %w", b.ID, err)
		}
	}
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		cur, err := tx.FindBatch(t, b.ID)
		if err != nil {
			return fmt.Errorf("batch %s: %w", b.ID, err)
		}
		if cur.Status == storage.BatchAssessing && len(plots) > 0 {
			if err := s.record(tx, t, job, cur, as); err != nil {
				return err
			}
		}
		tx.OnCommit(func() { work.Note(ctx, assessedFields(cur)) })
		return work.Complete(tx, t, job)
	})
}

// assessedFields are the outcome of a batch's assessment on the line its
// job's end is logged with.
func assessedFields(b *storage.Batch) func(zerolog.Context) zerolog.Context {
	return func(c zerolog.Context) zerolog.Context {
		c = c.Str("batch_status", b.Status)
		if b.RiskScore != nil {
			c = c.Int("risk_score", *b.RiskScore).Str("risk_level", b.RiskLevel)
		}
		return c
	}
}

// batchPlots reads the batch's polygons as risk.Assess takes them.
func batchPlots(tx *storage.Tx, t storage.Tenant, b *storage.Batch) ([]risk.Plot, error) {
	ids, err := tx.FindBatchPolygons(t, b.ID)
	if err != nil {
		return nil, fmt.Errorf("polygons of batch %s: %w", b.ID, err)
	}
	plots := make([]risk.Plot, len(ids))
	for i, id := range ids {
		p, err := tx.FindPolygon(t, id)
		if err != nil {
			return nil, fmt.Errorf("polygon %s of batch %s: %w", id, b.ID, err)
		}
		if p.Risk == nil {
			return nil, fmt.Errorf("polygon %s of batch %s is %s, without a risk score", id, b.ID, p.Status)
		}
		plots[i] = risk.Plot{PolygonID: p.ID, Country: p.ProducerCountry, AreaHa: p.AreaHa, RiskScore: p.Risk.RiskScore}
	}
	return plots, nil
}

// record records a batch's assessment, its new status, the job's result
// and progress, and publishes batch.risk_assessed, in the transaction that
// completes the job.
func (s *Service) record(tx *storage.Tx, t storage.Tenant, job *storage.Job, b *storage.Batch, as risk.Assessment) error {
	now := tx.Now()
	b.Status = storage.BatchVerified
	if as.Level != risk.LevelNegligible {
		b.Status = storage.BatchHighRisk
	}
	score := as.Score
	b.RiskScore, b.RiskLevel, b.AssessedAt = &score, as.Level, &now
	factors := risk.FactorsOf(as, s.o.Benchmark)
	bm, scope := s.o.Benchmark, risk.AnnexI()
	maxScore, engine, app, assessedAt := s.o.MaxScore, risk.EngineVersion, s.o.AppVersion, storage.FormatTime(now)
	doc, err := storage.MarshalJSON(RiskAssessment{BatchID: b.ID, JobID: b.JobID, Status: b.Status, RiskScore: &score,
		RiskLevel: &as.Level, MaxScore: &maxScore, Factors: factors,
		DataVersions: &DataVersions{
			CountryBenchmark: DataSet{Version: bm.Version, Source: bm.Source, Date: bm.Date, SHA256: bm.SHA256},
			AnnexI:           DataSet{Version: scope.Version, Source: scope.Source, Date: scope.Date, SHA256: scope.SHA256}},
		EngineVersion: &engine, AppVersion: &app, AssessedAt: &assessedAt})
	if err != nil {
		return fmt.Errorf("encode assessment of batch %s: %w", b.ID, err)
	}
	result, err := storage.MarshalJSON(JobResult{BatchID: b.ID, Status: b.Status, RiskScore: score, RiskLevel: as.Level})
	if err != nil {
		return err
	}
	if err := tx.PutBatch(t, b); err != nil {
		return err
	}
	if err := tx.PutBatchAssessment(t, b.ID, doc); err != nil {
		return err
	}
	if err := work.AddResult(tx, t, job, 0, b.Status, result); err != nil {
		return err
	}
	job.Progress.Processed, job.Progress.Succeeded = 1, 1
	_, _, err = s.o.Events.Publish(tx, t, event.BatchRiskAssessed, event.BatchRiskAssessedData{BatchID: b.ID, RiskScore: score,
		RiskLevel: as.Level, Factors: factors})
	return err
}
