//! Request-by-request comparison of two traces (`iogate analyze A --compare B`), the
//! fidelity check of a replay: the i-th request of A against the i-th of B. Streams both
//! traces side by side (memory does not grow with them).
//!
//! Times are compared from each trace's first request: the issue-time error of request i
//! is `(tB_i − tB_0) − (tA_i − tA_0)`. Requests are identical when operation, offset and
//! length are equal. When the sequences differ, an order-independent digest of each trace's
//! requests tells "same requests, another order" from "different requests". `analysis` is
//! its neighbour for single traces.

use hdrhistogram::Histogram;
use iogate_result::Op;
use iogate_trace::{TraceError, TraceRequest};
use serde::{Deserialize, Serialize};

use crate::analysis::{AnalysisError, Summary};

/// Mismatches listed in full.
const LISTED: usize = 10;

/// One request as compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compared {
    /// Read or write.
    pub op: Op,
    /// Byte offset.
    pub offset: u64,
    /// Length, bytes.
    pub length: u64,
    /// Time from the trace's first request, ns.
    pub time_ns: u64,
}

impl std::fmt::Display for Compared {
    /// `read 4KiB at 1048576 (t+1.2ms)`: what a storage engineer reads in a trace.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = match self.op {
            Op::Read => "read",
            Op::Write => "write",
        };
        write!(
            f,
            "{op} {} at byte {} (t+{})",
            iogate_spec::units::format_bytes(self.length as f64),
            self.offset,
            iogate_spec::units::format_ns(self.time_ns as f64)
        )
    }
}

/// A position where A and B differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mismatch {
    /// 0-based request index.
    pub index: u64,
    /// A's request (absent past A's end).
    pub a: Option<Compared>,
    /// B's request (absent past B's end).
    pub b: Option<Compared>,
}

/// The comparison (the JSON of `iogate analyze A --compare B --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// A's path.
    pub a: String,
    /// B's path.
    pub b: String,
    /// Requests in A.
    pub requests_a: u64,
    /// Requests in B.
    pub requests_b: u64,
    /// Positions where both have the same operation, offset and length.
    pub identical: u64,
    /// `identical` over the larger count, percent.
    pub identical_pct: f64,
    /// Whether both hold the same requests (as a multiset), whatever their order.
    pub same_requests: bool,
    /// Whether both hold the same requests in the same order.
    pub same_order: bool,
    /// Positions whose sizes differ.
    pub size_mismatches: u64,
    /// Positions whose offsets differ.
    pub offset_mismatches: u64,
    /// Positions whose operations differ.
    pub op_mismatches: u64,
    /// |issue-time error| over positions present in both, ns.
    pub issue_time_error_ns: Summary,
    /// Mean signed issue-time error (B late: positive), ns.
    pub mean_signed_error_ns: f64,
    /// The first differing positions.
    pub first_mismatches: Vec<Mismatch>,
    /// Malformed records in A and B (skipped).
    pub malformed: [u64; 2],
}

/// Order-independent digest of a request (summed, so order does not matter).
fn digest(r: &TraceRequest) -> u64 {
    let mut z = r.offset ^ r.length.rotate_left(40) ^ u64::from(r.op == Op::Write) << 63;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn next_ok(
    it: &mut impl Iterator<Item = Result<TraceRequest, TraceError>>,
    malformed: &mut u64,
) -> Result<Option<TraceRequest>, AnalysisError> {
    loop {
        match it.next() {
            None => return Ok(None),
            Some(Ok(r)) => return Ok(Some(r)),
            Some(Err(TraceError::Io(m))) => return Err(AnalysisError::Trace(m)),
            Some(Err(_)) => *malformed += 1,
        }
    }
}

/// Compares traces `a` and `b` request by request.
///
/// Errors: an I/O error reading either trace.
pub fn compare(
    a_name: &str,
    b_name: &str,
    mut a: impl Iterator<Item = Result<TraceRequest, TraceError>>,
    mut b: impl Iterator<Item = Result<TraceRequest, TraceError>>,
) -> Result<Comparison, AnalysisError> {
    // Bounds are constants that satisfy the constructor's checks.
    let mut error = Histogram::<u64>::new_with_bounds(1, u64::MAX / 4, 3)
        .expect("constant histogram bounds are valid");
    let mut c = Comparison {
        a: a_name.into(),
        b: b_name.into(),
        requests_a: 0,
        requests_b: 0,
        identical: 0,
        identical_pct: 0.0,
        same_requests: false,
        same_order: false,
        size_mismatches: 0,
        offset_mismatches: 0,
        op_mismatches: 0,
        issue_time_error_ns: Summary::default(),
        mean_signed_error_ns: 0.0,
        first_mismatches: Vec::new(),
        malformed: [0, 0],
    };
    let (mut first_a, mut first_b) = (None, None);
    let (mut digest_a, mut digest_b) = (0u64, 0u64);
    let mut signed_sum = 0i128;
    let mut index = 0u64;
    loop {
        let ra = next_ok(&mut a, &mut c.malformed[0])?;
        let rb = next_ok(&mut b, &mut c.malformed[1])?;
        if ra.is_none() && rb.is_none() {
            break;
        }
        let view = |r: &TraceRequest, first: &mut Option<u64>| Compared {
            op: r.op,
            offset: r.offset,
            length: r.length,
            time_ns: r.time_ns.saturating_sub(*first.get_or_insert(r.time_ns)),
        };
        let va = ra.as_ref().map(|r| view(r, &mut first_a));
        let vb = rb.as_ref().map(|r| view(r, &mut first_b));
        if let Some(r) = &ra {
            c.requests_a += 1;
            digest_a = digest_a.wrapping_add(digest(r));
        }
        if let Some(r) = &rb {
            c.requests_b += 1;
            digest_b = digest_b.wrapping_add(digest(r));
        }
        let same = match (&va, &vb) {
            (Some(x), Some(y)) => {
                let e = y.time_ns as i128 - x.time_ns as i128;
                signed_sum += e;
                error.saturating_record(e.unsigned_abs() as u64);
                c.op_mismatches += u64::from(x.op != y.op);
                c.offset_mismatches += u64::from(x.offset != y.offset);
                c.size_mismatches += u64::from(x.length != y.length);
                x.op == y.op && x.offset == y.offset && x.length == y.length
            }
            _ => false,
        };
        if same {
            c.identical += 1;
        } else if c.first_mismatches.len() < LISTED {
            c.first_mismatches.push(Mismatch {
                index,
                a: va,
                b: vb,
            });
        }
        index += 1;
    }
    let larger = c.requests_a.max(c.requests_b);
    c.identical_pct = if larger > 0 {
        c.identical as f64 * 100.0 / larger as f64
    } else {
        100.0
    };
    c.same_requests = c.requests_a == c.requests_b && digest_a == digest_b;
    c.same_order = c.requests_a == c.requests_b && c.identical == c.requests_a;
    c.issue_time_error_ns = crate::analysis::summary_of(&error);
    let pairs = c.requests_a.min(c.requests_b);
    c.mean_signed_error_ns = if pairs > 0 {
        signed_sum as f64 / pairs as f64
    } else {
        0.0
    };
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(t: u64, offset: u64, length: u64) -> Result<TraceRequest, TraceError> {
        Ok(TraceRequest {
            time_ns: t,
            op: Op::Read,
            offset,
            length,
            device: None,
            service_time_ns: None,
        })
    }

    #[test]
    fn identical_traces_with_shifted_times() {
        let a = vec![req(100, 0, 4096), req(200, 8192, 4096), req(400, 4096, 512)];
        let b = vec![
            req(5000, 0, 4096),
            req(5130, 8192, 4096),
            req(5300, 4096, 512),
        ];
        let c = compare("a", "b", a.into_iter(), b.into_iter()).unwrap();
        assert!(c.same_order && c.same_requests);
        assert_eq!(c.identical, 3);
        assert_eq!(c.issue_time_error_ns.max, 30);
        assert!((c.mean_signed_error_ns - 10.0).abs() < 1e-9);
    }

    #[test]
    fn reordered_and_changed_requests_are_told_apart() {
        let a = vec![req(0, 0, 4096), req(1, 8192, 4096)];
        let swapped = vec![req(0, 8192, 4096), req(1, 0, 4096)];
        let c = compare("a", "b", a.clone().into_iter(), swapped.into_iter()).unwrap();
        assert!(c.same_requests && !c.same_order);
        assert_eq!((c.identical, c.offset_mismatches), (0, 2));
        let resized = vec![req(0, 0, 4096), req(1, 8192, 8192), req(2, 0, 512)];
        let c = compare("a", "b", a.into_iter(), resized.into_iter()).unwrap();
        assert!(!c.same_requests);
        assert_eq!((c.identical, c.size_mismatches, c.requests_b), (1, 1, 3));
        assert_eq!(c.first_mismatches.len(), 2);
        assert!(c.first_mismatches[1].a.is_none());
    }
}
