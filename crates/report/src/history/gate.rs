//! `iogate run --history`: a fresh run's gated metrics judged against the last accepted
//! builds of their series before it is stored ([`judge_run`], [`JudgedRun`]), and which
//! build a run tested ([`build_info`], from options or the CI's variables). A regression
//! turns a passing run's outcome into `regressed` ([`JudgedRun::turn_outcome`]), in the
//! result and in the record stored, so result.json, the exit code and the store agree;
//! the session crate prints the judgements; `detect::judge` decides each.

use std::path::Path;

use iogate_result::{BuildInfo, Outcome, RunResult};

use super::detect::{self, Judgement};
use super::edivisive::Options;
use super::store::Store;
use super::{series, trend};
use super::{BuildOverride, MetricRecord, RunRecord};

/// The build of a run: `--build`/`--build-order`, else `IOGATE_BUILD` /
/// `IOGATE_BUILD_ORDER`, else what common CI systems set (GitHub Actions
/// `GITHUB_SHA`/`GITHUB_RUN_NUMBER`, GitLab `CI_COMMIT_SHA`/`CI_PIPELINE_IID`, Jenkins
/// `GIT_COMMIT`/`BUILD_NUMBER`, Buildkite `BUILDKITE_COMMIT`/`BUILDKITE_BUILD_NUMBER`).
/// A build id without an order takes `known(id)` (the order the history store already
/// holds for it: every host running one build shares its place), else the time it runs
/// (seconds since the epoch, as a stored result without a build is); an order that
/// contradicts the known one is an error; None without either.
pub fn build_info(
    build: Option<&str>,
    order: Option<i64>,
    known: impl FnOnce(&str) -> Result<Option<i64>, String>,
) -> Result<Option<BuildInfo>, String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let pairs = [
        ("IOGATE_BUILD", "IOGATE_BUILD_ORDER"),
        ("GITHUB_SHA", "GITHUB_RUN_NUMBER"),
        ("CI_COMMIT_SHA", "CI_PIPELINE_IID"),
        ("GIT_COMMIT", "BUILD_NUMBER"),
        ("BUILDKITE_COMMIT", "BUILDKITE_BUILD_NUMBER"),
    ];
    let order = match order {
        Some(o) => Some(o),
        None => match pairs.iter().find_map(|(_, o)| env(o).map(|v| (*o, v))) {
            Some((name, v)) => Some(
                iogate_spec::cli_values::build_order(&v)
                    .map_err(|e| format!("{name} is not a build number: {e}"))?,
            ),
            None => None,
        },
    };
    let id = build
        .map(str::to_string)
        .or_else(|| pairs.iter().find_map(|(i, _)| env(i)));
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    };
    let order_derived = order.is_none() && id.is_some();
    let order = match (order, &id) {
        (Some(o), Some(id)) => match known(id)? {
            Some(k) if k != o => {
                return Err(format!(
                    "build {id} is stored at build order {k}; build order {o} contradicts it \
                     (one build has one place in the history)"
                ))
            }
            _ => Some(o),
        },
        (Some(o), None) => Some(o),
        (None, Some(id)) => Some(known(id)?.unwrap_or_else(now)),
        (None, None) => None,
    };
    Ok(order.map(|order| BuildInfo {
        id: id.unwrap_or_else(|| order.to_string()),
        order,
        order_derived,
    }))
}

/// A run judged against history (`run --history`), not yet ingested.
pub struct JudgedRun {
    run: RunRecord,
    /// The build's order was derived, not given: filed at the build's stored order.
    order_derived: bool,
    metrics: Vec<MetricRecord>,
    detail: super::RunDetail,
    judgements: Vec<Judgement>,
}

/// `run --history DB`: the run's gated metrics (`is_gated_metric`) against the last
/// accepted (passed) builds of their series before this build; never against runs of
/// its own build (other hosts of a campaign, an earlier attempt). Reads the store only.
pub fn judge_run(store: &mut Store, result: &RunResult) -> Result<JudgedRun, String> {
    let (run, metrics) = super::records(result, &BuildOverride::default());
    let runs: Vec<RunRecord> = store
        .runs()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|r| {
            r.spec_name == run.spec_name
                && r.device_model == run.device_model
                && r.device_serial == run.device_serial
                && r.host_class == run.host_class
                && r.outcome == "pass"
                && r.build_id != run.build_id
        })
        .collect();
    let stored: Vec<_> = store
        .metrics(Some(&run.spec_name), None)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|m| super::is_gated_metric(&m.metric))
        .collect();
    let expected = store.expected().map_err(|e| e.to_string())?;
    let all = series::build(&runs, &stored);
    let judgements = metrics
        .iter()
        .filter(|m| super::is_gated_metric(&m.metric))
        .map(|m| {
            let points = all
                .iter()
                .find(|s| s.key.metric == m.metric)
                .map_or(&[][..], |s| &s.points[..]);
            detect::judge(
                &run.spec_name,
                m,
                points,
                run.build_order,
                &expected,
                &Options::default(),
                HISTORY_TOLERANCE_PCT,
            )
        })
        .collect();
    let detail = super::detail(result, &run.run_key);
    Ok(JudgedRun {
        run,
        order_derived: result.build.as_ref().is_some_and(|b| b.order_derived),
        metrics,
        detail,
        judgements,
    })
}

impl JudgedRun {
    /// Whether a gated metric regressed.
    pub fn regressed(&self) -> bool {
        self.judgements.iter().any(|j| j.verdict == "regressed")
    }

    /// A regression turns a passing run into a regressed one: `result.outcome` and the
    /// outcome of the record this run will be stored as (a regressed build is not an
    /// accepted one for the builds judged after it). Other outcomes stay: a failed,
    /// inconclusive or erroneous run already says more. Returns whether it turned.
    pub fn turn_outcome(&mut self, result: &mut RunResult) -> bool {
        if !self.regressed() || result.outcome != Outcome::Pass {
            return false;
        }
        result.outcome = Outcome::Regressed;
        self.run.outcome = "regressed".to_string();
        true
    }

    /// One line per gated metric that moved (regressed, improved, inconclusive), then
    /// a line saying how many metrics were judged against how many builds.
    pub fn report_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for j in &self.judgements {
            let word = match j.verdict {
                "regressed" => "REGRESSED",
                "improved" => "improved",
                "inconclusive" => "inconclusive (beyond the tolerance, within the builds' spread)",
                _ => continue,
            };
            lines.push(format!(
                "history: {} {word} against the last {} accepted builds ({} vs {} ± {}, {:+.1}%, p = {:.2e})",
                j.metric,
                j.builds,
                trend::format_value(&j.metric, j.value),
                trend::format_value(&j.metric, j.history_mean),
                trend::format_value(&j.metric, j.history_stddev),
                j.change_pct,
                j.pvalue
            ));
        }
        // The build as the CI names it, with its place in the history.
        lines.push(format!(
            "history: build {} (order {}) judged on {} metrics against up to {} accepted builds",
            self.run.build_id,
            self.run.build_order,
            self.judgements.len(),
            self.judgements.iter().map(|j| j.builds).max().unwrap_or(0),
        ));
        lines
    }

    /// Writes `history.json` into `dir` (the result directory being staged): the build,
    /// the tolerance, the largest p-value, the window and every judgement.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let opts = Options::default();
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "build_id": self.run.build_id,
            "build_order": self.run.build_order,
            "tolerance_pct": HISTORY_TOLERANCE_PCT,
            "max_pvalue": detect::JUDGE_MAX_PVALUE,
            "window": opts.window,
            "judgements": self.judgements,
        }))
        .map_err(|e| e.to_string())?;
        iogate_spec::files::write_atomic(&dir.join("history.json"), text.as_bytes())
            .map_err(|e| format!("{}: {e}", dir.display()))
    }

    /// Stores the run (after its result directory is in place); what the store did.
    pub fn ingest(&self, store: &mut Store) -> Result<super::store::Ingested, super::HistoryError> {
        let order = match self.order_derived {
            true => super::store::BuildOrder::FollowBuild,
            false => super::store::BuildOrder::AsRecorded,
        };
        store.ingest(&self.run, &self.metrics, &self.detail, order)
    }
}

/// Tolerance band of `run --history` around the accepted builds' mean, percent: a run
/// regresses only when it lies past the band's edge by more than the builds' own
/// run-to-run spread explains (`detect::judge`); below it, a change is too small to fail
/// a build over.
pub const HISTORY_TOLERANCE_PCT: f64 = super::edivisive::DEFAULT_MIN_CHANGE_PCT;
