// Package risk assesses the deforestation risk of a batch of screened plots
// (EUDR Articles 10 and 29) and holds the regulatory tables it needs, as
// versioned data embedded in the binary:
//
//   - the country benchmark of Implementing Regulation (EU) 2025/1093
//     (data/country_benchmark.json; an operator may replace it with a file
//     of the same shape, see ParseBenchmark);
//   - the product scope of Annex I to Regulation (EU) 2023/1115: which
//     Harmonised System codes belong to which commodity (data/annex_i.json).
//
// The package is pure: no files, network, clock or goroutines. It reads
// only the embedded data and the bytes it is given.
//
// # Assessment
//
// Assess scores three factors from 0 to 100 and gives the batch the highest
// of them: one factor that is not negligible is enough, and good factors do
// not average a bad one away (a product is deforestation-free only if all
// of it is).
//
//   - country_benchmark: the risk class of each plot's country of
//     production; the worst class among the plots counts. Low 0 (simplified
//     due diligence, Article 13), standard 25, high 100 (never negligible on
//     the appliance's own evidence: the operator must mitigate, Article 11).
//   - plot_risk: the highest risk score among the plots (from screening).
//     Not an area-weighted mean: a batch's product may come from any of its
//     plots, so a large clean plot must not dilute a small risky one. The
//     area-weighted mean is reported as an input for information.
//   - supplier_history: the share of the supplier's screened plots (COMPLIANT
//     or HIGH_RISK; FAILED plots were never judged and do not count) that
//     were HIGH_RISK, as half its percentage, at most 50. A bad record raises
//     a batch towards the threshold but cannot alone make a batch of
//     COMPLIANT plots non-negligible under the default threshold of 50.
//
// The risk is negligible when the score is at most the threshold
// (risk.max_score, default 50). With the default threshold a batch of
// COMPLIANT plots (each scoring at most 50) from low- and standard-risk
// countries is negligible, and one with a plot from a high-risk country is
// not, whatever the supplier's record: the rule docs/batches.md states.
package risk
