//! How a latency summary of no request is written: `null`, never the zeros it holds in
//! memory (a step that completed no request has no latency, and 0 ns would read as
//! the fastest drive there is). Used by `StepMetrics` and `OpMetrics` in `step.rs`;
//! reading `null` (and results written before, with zeros) gives the empty summary
//! back, whose figures `lookup` and `report::evidence` treat as undecided.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::LatencySummary;

/// Serializes `l` as `null` when it summarises no request (`LatencySummary::is_empty`).
pub fn serialize<S: Serializer>(l: &LatencySummary, s: S) -> Result<S::Ok, S::Error> {
    if l.is_empty() {
        s.serialize_none()
    } else {
        l.serialize(s)
    }
}

/// Reads a summary, `null` as the empty one.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<LatencySummary, D::Error> {
    Ok(Option::<LatencySummary>::deserialize(d)?.unwrap_or_default())
}
