//! The history store's reads of one build, for `campaign`: its runs (of one campaign),
//! their metrics, step histograms and wall-clock intervals, and the build's place in
//! build order. Child of `store`, whose connection and schema version it reads.

use super::super::sql::{int, text, Val};
use super::super::{HistogramRecord, HistoryError, IntervalRecord, MetricRecord, RunRecord};
use super::{run_of, Store, METRIC_COLUMNS};
use iogate_result::points::HistogramBucket;

impl Store {
    /// The runs of build `build_id` (of campaign `campaign` only, when given), in start
    /// order.
    pub fn runs_of_build(
        &mut self,
        build_id: &str,
        campaign: Option<&str>,
    ) -> Result<Vec<RunRecord>, HistoryError> {
        let filter = if self.version == 1 {
            "build_id = $1 AND $2 = ''"
        } else {
            "build_id = $1 AND ($2 = '' OR campaign = $2)"
        };
        let sql = format!(
            "SELECT {} FROM runs WHERE {filter} ORDER BY started_at, run_key",
            self.run_columns()
        );
        let vals = [
            Val::Text(Some(build_id.to_string())),
            Val::Text(Some(campaign.unwrap_or("").to_string())),
        ];
        Ok(self
            .query(&sql, &vals)?
            .into_iter()
            .map(|r| run_of(&r))
            .collect())
    }

    /// The metrics of [`Store::runs_of_build`]'s runs, by run key.
    pub fn metrics_of_build(
        &mut self,
        build_id: &str,
        campaign: Option<&str>,
    ) -> Result<Vec<MetricRecord>, HistoryError> {
        let filter = if self.version == 1 {
            "r.build_id = $1 AND $2 = ''"
        } else {
            "r.build_id = $1 AND ($2 = '' OR r.campaign = $2)"
        };
        let sql = format!(
            "SELECT {METRIC_COLUMNS} FROM metrics m JOIN runs r ON r.run_key = m.run_key \
             WHERE {filter} ORDER BY m.run_key, m.metric"
        );
        let vals = [
            Val::Text(Some(build_id.to_string())),
            Val::Text(Some(campaign.unwrap_or("").to_string())),
        ];
        let rows = self.query(&sql, &vals)?;
        rows.iter().map(|r| self.metric_of(r)).collect()
    }

    /// The step latency histograms of [`Store::runs_of_build`]'s runs.
    pub fn histograms_of_build(
        &mut self,
        build_id: &str,
        campaign: Option<&str>,
    ) -> Result<Vec<HistogramRecord>, HistoryError> {
        if self.version == 1 {
            return Ok(Vec::new());
        }
        let sql = "SELECT h.run_key, h.step, h.buckets FROM histograms h JOIN runs r \
                   ON r.run_key = h.run_key WHERE r.build_id = $1 AND ($2 = '' OR r.campaign = $2) \
                   ORDER BY h.run_key, h.step";
        let vals = [
            Val::Text(Some(build_id.to_string())),
            Val::Text(Some(campaign.unwrap_or("").to_string())),
        ];
        let rows = self.query(sql, &vals)?;
        rows.iter()
            .map(|r| {
                let triples: Vec<(u64, u64, u64)> =
                    serde_json::from_str(&text(&r[2]).unwrap_or_default()).map_err(|e| {
                        HistoryError::Database {
                            db: self.name.clone(),
                            message: format!(
                                "histogram of {}: {e}",
                                text(&r[0]).unwrap_or_default()
                            ),
                        }
                    })?;
                Ok(HistogramRecord {
                    run_key: text(&r[0]).unwrap_or_default(),
                    step: text(&r[1]).unwrap_or_default(),
                    buckets: triples
                        .into_iter()
                        .map(|(lower_ns, upper_ns, count)| HistogramBucket {
                            lower_ns,
                            upper_ns,
                            count,
                        })
                        .collect(),
                })
            })
            .collect()
    }

    /// The wall-clock intervals of [`Store::runs_of_build`]'s runs.
    pub fn intervals_of_build(
        &mut self,
        build_id: &str,
        campaign: Option<&str>,
    ) -> Result<Vec<IntervalRecord>, HistoryError> {
        if self.version == 1 {
            return Ok(Vec::new());
        }
        let sql = "SELECT i.run_key, i.step, i.start_unix_ns, i.duration_ns, i.ios FROM \
                   intervals i JOIN runs r ON r.run_key = i.run_key WHERE r.build_id = $1 \
                   AND ($2 = '' OR r.campaign = $2) ORDER BY i.run_key, i.step, i.start_unix_ns";
        let vals = [
            Val::Text(Some(build_id.to_string())),
            Val::Text(Some(campaign.unwrap_or("").to_string())),
        ];
        Ok(self
            .query(sql, &vals)?
            .iter()
            .map(|r| IntervalRecord {
                run_key: text(&r[0]).unwrap_or_default(),
                step: text(&r[1]).unwrap_or_default(),
                start_unix_ns: int(&r[2]).unwrap_or(0),
                duration_ns: int(&r[3]).unwrap_or(0),
                ios: int(&r[4]).unwrap_or(0),
            })
            .collect())
    }

    /// The build order the store holds for build `build_id` (the first stored run's),
    /// None when it holds no run of it.
    pub fn build_order_of(&mut self, build_id: &str) -> Result<Option<i64>, HistoryError> {
        let rows = self.query(
            "SELECT build_order FROM runs WHERE build_id = $1 ORDER BY started_at LIMIT 1",
            &[Val::Text(Some(build_id.to_string()))],
        )?;
        Ok(rows.first().and_then(|r| r.first()).and_then(int))
    }
}
