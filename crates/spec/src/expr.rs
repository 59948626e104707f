//! Assertion expressions over the metric catalogue (`metric`, re-exported here).
//!
//! `syntax` parses text into the AST here; `compile` resolves each [`MetricPath`] into a
//! [`MetricRef`] against the spec's steps and checks dimensions (durations, byte sizes,
//! bandwidths, rates, plain numbers) so that `latency.p99 < 200` (a bare number against a
//! duration) is a diagnostic, not a silent nanosecond/second mix-up. The report crate
//! evaluates assertions with [`Assertion::evaluate`], looking metric values up in a run
//! result. All values are in SI base units: seconds, bytes, bytes/s, per second.

use std::ops::Range;

use serde::{Deserialize, Serialize};

pub use crate::dim::Dim;
pub use crate::metric::{
    CaseSelector, Figure, LatencyStat, Metric, MetricPath, MetricRef, OpFilter, PathError,
    MAX_NINES, METRIC_NAMES,
};

/// The largest exponent of bytes or seconds an assertion's unit may reach (`bytes^8`):
/// far beyond any meaningful expression, and far below the `i8` that holds it.
pub const MAX_UNIT_EXPONENT: u8 = 8;

/// Binary arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
}

impl CmpOp {
    /// The operator's text.
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
}

/// An expression node with its span (relative to the assertion text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Expr {
    /// The node.
    pub kind: ExprKind,
    /// Byte span in the assertion text.
    pub span: Range<usize>,
}

/// Expression nodes. Quantities are in SI base units (seconds, bytes, bytes/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ExprKind {
    /// A bare number.
    Number(f64),
    /// A number with a unit, converted to base units.
    Quantity(f64, Dim),
    /// A metric path; the `MetricRef` is filled in by compilation.
    Metric(MetricPath, Option<MetricRef>),
    /// Negation.
    Neg(Box<Expr>),
    /// Arithmetic.
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// `lhs op rhs`, as parsed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParsedAssertion {
    /// Left side.
    pub lhs: Expr,
    /// Comparison.
    pub op: CmpOp,
    /// Right side.
    pub rhs: Expr,
}

/// A compiled assertion from the spec's `assert:` list.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Assertion {
    /// The text as written.
    pub expr: String,
    /// The parsed and resolved expression (not serialized: `metrics` lists what it reads).
    #[serde(skip_serializing)]
    pub parsed: ParsedAssertion,
    /// The metrics the expression reads, resolved.
    pub metrics: Vec<MetricRef>,
    /// Dimension of both sides (for display of values).
    pub dim: Dim,
    /// Not judged when a metric it reads is not available (the implicit drive-health
    /// assertions on a target without an NVMe health log).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

/// The outcome of evaluating one assertion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// Left side's value, in base units.
    pub lhs: f64,
    /// Right side's value, in base units.
    pub rhs: f64,
    /// Whether the comparison holds (false when either side is NaN).
    pub passed: bool,
}

/// Type of a sub-expression during checking: its dimension, whether it is a bare
/// literal (a bare number adopts the dimension of counts and rates it meets), what a
/// plain number means ([`Scale`]) and, for an expression of literals only, its value.
#[derive(Debug, Clone, Copy)]
struct Ty {
    dim: Dim,
    bare: bool,
    scale: Scale,
    /// The value of an expression of literals only (no metric).
    constant: Option<f64>,
}

/// What a dimensionless value counts, so that `over[1ms] < 5%` (a count against a share)
/// or `health.available_spare > 10%` (a number of percent against a share) is a
/// diagnostic, not a comparison with 0.05 or 0.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scale {
    /// A bare number, or a ratio of metrics: meets anything.
    Plain,
    /// A count of requests, errors, events; a temperature; a round.
    Count,
    /// A share as a fraction (`over_pct[…]`, `hit_pct`, a `5%` literal).
    Share,
    /// A number of percent, 0 to 100 (`health.available_spare`, `percentage_used`).
    Percent,
}

impl Scale {
    fn of(m: Metric) -> Scale {
        use crate::metric::HealthMetric as H;
        match m {
            Metric::LatencyOverPct(_) | Metric::Figure(Figure::HitPct) => Scale::Share,
            Metric::Health(H::AvailableSpare | H::PercentageUsed) => Scale::Percent,
            Metric::Health(H::WriteAmplification) => Scale::Plain,
            _ if m.dim() == Dim::NONE => Scale::Count,
            _ => Scale::Plain,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Scale::Plain => "a number",
            Scale::Count => "a count like 5 (not a percentage)",
            Scale::Share => "a share like 5% (a bare number is a fraction: 0.05)",
            Scale::Percent => {
                "a number of percent like 80 (this metric is in percent, not a fraction)"
            }
        }
    }
}

/// The scale two dimensionless sides share, or what was expected and found.
fn unify_scale(l: Ty, r: Ty) -> Result<Scale, (Scale, String)> {
    let zero = |t: Ty| t.constant == Some(0.0);
    let literal_number = |t: Ty| t.bare && t.scale == Scale::Plain;
    match (l.scale, r.scale) {
        (a, b) if a == b => Ok(a),
        _ if zero(l) => Ok(r.scale),
        _ if zero(r) => Ok(l.scale),
        (Scale::Share, _) if literal_number(r) => Err((Scale::Share, "a bare number".into())),
        (_, Scale::Share) if literal_number(l) => Err((Scale::Share, "a bare number".into())),
        (Scale::Plain, b) => Ok(b),
        (a, Scale::Plain) => Ok(a),
        (a, b) => Err((a, b.describe().to_string())),
    }
}

/// A mistake found while checking an expression.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeError {
    /// Span of the offending sub-expression.
    pub span: Range<usize>,
    /// Message.
    pub message: String,
    /// Expected/found label.
    pub label: String,
    /// What kind of mistake.
    pub kind: TypeErrorKind,
}

/// What kind of mistake a [`TypeError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeErrorKind {
    /// Dimensions that differ (a duration against a bare number).
    Units,
    /// Dimensionless values of different scales (a count against a percentage).
    Scale,
    /// A constant that decides nothing: a literal divisor of 0, a number past f64.
    Constant,
}

fn unify(l: Ty, r: Ty, span: Range<usize>, what: &str) -> Result<Ty, TypeError> {
    let adoptable = |d: Dim| d == Dim::NONE || d == Dim::RATE;
    if l.dim == r.dim {
        let scale = if l.dim == Dim::NONE {
            unify_scale(l, r).map_err(|(expected, found)| TypeError {
                span: span.clone(),
                message: format!("cannot {what} {} and {found}", expected.describe()),
                label: format!("expected {}, found {found}", expected.describe()),
                kind: TypeErrorKind::Scale,
            })?
        } else {
            Scale::Plain
        };
        return Ok(Ty {
            dim: l.dim,
            bare: l.bare && r.bare,
            scale,
            constant: None,
        });
    }
    if l.bare && adoptable(r.dim) {
        return Ok(r);
    }
    if r.bare && adoptable(l.dim) {
        return Ok(l);
    }
    let found = if r.bare {
        "a bare number".to_string()
    } else {
        r.dim.describe()
    };
    Err(TypeError {
        span,
        message: format!("cannot {what} {} and {}", l.dim.describe(), found),
        label: format!("expected {}, found {}", l.dim.describe(), found),
        kind: TypeErrorKind::Units,
    })
}

impl Expr {
    /// Dimension, scale and (for literals only) value of this sub-expression, each
    /// child checked once.
    fn check(&self) -> Result<Ty, TypeError> {
        let leaf = |dim, bare, scale, constant| Ty {
            dim,
            bare,
            scale,
            constant,
        };
        let ty = match &self.kind {
            ExprKind::Number(v) => leaf(Dim::NONE, true, Scale::Plain, Some(*v)),
            // A dimensionless quantity is a percentage literal: a share.
            ExprKind::Quantity(v, d) if *d == Dim::NONE => leaf(*d, false, Scale::Share, Some(*v)),
            ExprKind::Quantity(v, d) => leaf(*d, false, Scale::Plain, Some(*v)),
            ExprKind::Metric(_, m) => m
                .as_ref()
                .map_or(leaf(Dim::NONE, false, Scale::Plain, None), |m| {
                    leaf(m.metric.dim(), false, Scale::of(m.metric), None)
                }),
            ExprKind::Neg(e) => {
                let t = e.check()?;
                Ty {
                    constant: t.constant.map(|c| -c),
                    ..t
                }
            }
            ExprKind::Binary(op, l, r) => self.binary(*op, l.check()?, r)?,
        };
        // A constant that overflows would decide a verdict on infinity.
        if let Some(c) = ty.constant.filter(|c| !c.is_finite()) {
            return Err(TypeError {
                span: self.span.clone(),
                message: "a constant that is not a finite number".into(),
                label: format!("expected a finite number, found {c}"),
                kind: TypeErrorKind::Constant,
            });
        }
        Ok(ty)
    }

    /// `lt op r`: dimensions and scales combined; a literal divisor of 0 refused.
    fn binary(&self, op: BinOp, lt: Ty, r: &Expr) -> Result<Ty, TypeError> {
        let rt = r.check()?;
        if op == BinOp::Div && rt.constant == Some(0.0) {
            return Err(TypeError {
                span: r.span.clone(),
                message: "division by zero".into(),
                label: "expected a divisor other than 0, found 0".into(),
                kind: TypeErrorKind::Constant,
            });
        }
        let constant = lt.constant.zip(rt.constant).map(|(a, b)| {
            let v = match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a * b,
                BinOp::Div => a / b,
            };
            // A sum that cancels to binary rounding noise is the 0 it is in decimal
            // (`0.1 + 0.2 - 0.3`), so a divisor written that way is refused too.
            let cancels =
                matches!(op, BinOp::Add | BinOp::Sub) && v.abs() <= 1e-12 * a.abs().max(b.abs());
            if cancels {
                0.0
            } else {
                v
            }
        });
        if matches!(op, BinOp::Add | BinOp::Sub) {
            let t = unify(lt, rt, r.span.clone(), "add or subtract")?;
            return Ok(Ty { constant, ..t });
        }
        // A plain factor keeps the other side's scale (`errors * 2`, `5% * 1`,
        // `available_spare / 1`); a ratio of two of one kind is a plain number
        // (`errors / ios`, `10% / 1%`).
        let scale = match (op, lt.scale, rt.scale) {
            (_, Scale::Plain, s) | (_, s, Scale::Plain) => s,
            (BinOp::Div, a, b) if a == b => Scale::Plain,
            (_, a, _) => a,
        };
        let sign = if op == BinOp::Mul { 1 } else { -1 };
        let exponent = |a: i8, b: i8| {
            a.checked_add(b.checked_mul(sign)?)
                .filter(|e| e.unsigned_abs() <= MAX_UNIT_EXPONENT)
        };
        match (
            exponent(lt.dim.bytes, rt.dim.bytes),
            exponent(lt.dim.time, rt.dim.time),
        ) {
            (Some(bytes), Some(time)) => Ok(Ty {
                dim: Dim { bytes, time },
                bare: lt.bare && rt.bare,
                scale,
                constant,
            }),
            _ => Err(TypeError {
                span: self.span.clone(),
                message: format!(
                    "units multiply past bytes^{MAX_UNIT_EXPONENT} or seconds^{MAX_UNIT_EXPONENT}"
                ),
                label: "no metric has such a unit: simplify the expression".into(),
                kind: TypeErrorKind::Units,
            }),
        }
    }

    /// Visits every metric path, mutably (for resolution).
    pub fn metrics_mut(&mut self, f: &mut dyn FnMut(&MetricPath, &mut Option<MetricRef>)) {
        match &mut self.kind {
            ExprKind::Metric(p, r) => f(p, r),
            ExprKind::Neg(e) => e.metrics_mut(f),
            ExprKind::Binary(_, l, r) => {
                l.metrics_mut(f);
                r.metrics_mut(f);
            }
            _ => {}
        }
    }

    /// Evaluates with metric values from `lookup` (base units). Unknown metrics are NaN.
    pub fn eval(&self, lookup: &dyn Fn(&MetricRef) -> Option<f64>) -> f64 {
        match &self.kind {
            ExprKind::Number(v) | ExprKind::Quantity(v, _) => *v,
            ExprKind::Metric(_, m) => m.as_ref().and_then(lookup).unwrap_or(f64::NAN),
            ExprKind::Neg(e) => -e.eval(lookup),
            ExprKind::Binary(op, l, r) => {
                let (a, b) = (l.eval(lookup), r.eval(lookup));
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                }
            }
        }
    }
}

impl ParsedAssertion {
    /// Checks dimensions; returns the dimension both sides share.
    pub fn check(&self) -> Result<Dim, TypeError> {
        let l = self.lhs.check()?;
        let r = self.rhs.check()?;
        unify(l, r, self.rhs.span.clone(), "compare").map(|t| t.dim)
    }
}

impl Assertion {
    /// Evaluates the assertion; NaN on either side fails it.
    pub fn evaluate(&self, lookup: &dyn Fn(&MetricRef) -> Option<f64>) -> Evaluation {
        let lhs = self.parsed.lhs.eval(lookup);
        let rhs = self.parsed.rhs.eval(lookup);
        // A side that is not a finite number (a division by zero, a missing metric) never
        // passes: `x / 0 < 5` must not decide a verdict on infinity.
        if !lhs.is_finite() || !rhs.is_finite() {
            return Evaluation {
                lhs,
                rhs,
                passed: false,
            };
        }
        let passed = match self.parsed.op {
            CmpOp::Lt => lhs < rhs,
            CmpOp::Le => lhs <= rhs,
            CmpOp::Gt => lhs > rhs,
            CmpOp::Ge => lhs >= rhs,
            CmpOp::Eq => lhs == rhs,
            CmpOp::Ne => lhs != rhs && !lhs.is_nan() && !rhs.is_nan(),
        };
        Evaluation { lhs, rhs, passed }
    }
}

/// Formats a value of a dimension for people: durations with ns/µs/ms/s, sizes with
/// IEC units, bandwidth in MiB/s, others with up to 2 decimals.
pub fn format_value(v: f64, dim: Dim) -> String {
    if v.is_nan() {
        return "n/a".into();
    }
    match dim {
        Dim::TIME => crate::units::format_ns(v * 1e9),
        Dim::BYTES => crate::units::format_bytes(v),
        Dim::BANDWIDTH => format!("{}/s", crate::units::format_bytes(v)),
        _ if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        // Two significant digits below 0.1 (a share like 0.00057), else two decimals.
        _ => {
            let decimals = (1 - v.abs().log10().floor() as i32).clamp(2, 12) as usize;
            format!("{v:.decimals$}")
        }
    }
}
