//! Spec text → [`Plan`]: YAML structure (`document`), value parsing (`syntax`), checks,
//! defaults, metric resolution (`expr`). Every mistake becomes a [`Diagnostic`] and all
//! of them are returned together; a plan is returned only when there are none.
//!
//! Defaults (documented in the README's spec reference): seed 1; precondition 2 passes
//! of 128KiB sequential writes at queue depth 16; workload queue depth 1, 1 job, 60s;
//! random alignment = block size (fio's `blockalign`); region = the whole target.

use std::ops::Range;

use sha2::{Digest, Sha256};

use crate::diag::{Diagnostic, Diagnostics, SourceFile};
use crate::document::{
    Origin, ParamTable, RawDistribution, RawMixLine, RawPrecondition, RawRegion, RawSpec, RawStep,
    RawWorkload, Setting, Spanned,
};
use crate::plan::{
    derive_seed, Command, Distribution, Geometry, Limit, MixLine, PeerRule, Plan, PlanStep,
    PlanTarget, RateLimit, Region, StepBody, Zone, PLAN_SCHEMA_VERSION,
};
use crate::syntax::{self, SizeOrPercent};

mod compose;
mod data;
mod errors;
mod events;
mod group;
pub(crate) mod include;
mod io_path;
mod mix;
mod power_cycle;
mod precondition;
mod repeat;
mod replay;
mod rules;
mod steps;
mod sweep;
mod sweep_points;
mod sweep_pre_writes;
pub(crate) mod yaml;
pub use compose::{compose, parse_document, Composed};
pub use events::MAX_EVENTS_PER_STEP;
pub use group::MAX_EXPANDED_STEPS;
pub use include::{MAX_DEPTH, MAX_FRAGMENTS, MAX_INCLUDES};
use precondition::precondition;
pub use replay::DEFAULT_REPLAY_QUEUE_DEPTH;
use steps::{latency_bands, workload};

/// Largest queue depth a job may ask for (io_uring's ring size limit is 32768 entries).
pub const MAX_QUEUE_DEPTH: u64 = 32_768;
/// Largest number of jobs (threads) in one step.
pub const MAX_JOBS: u64 = 1_024;
/// Largest block size (one registered buffer per outstanding request).
pub const MAX_BLOCK_SIZE: u64 = 64 << 20;

pub(crate) const RESERVED_NAMES: [&str; 9] = [
    "read",
    "write",
    "iops",
    "bandwidth",
    "ios",
    "bytes",
    "errors",
    "latency",
    "steady_state",
];

struct Ctx<'a> {
    /// The file being compiled: the spec, or a fragment it includes.
    src: &'a SourceFile,
    /// The spec (0) and its fragments.
    sources: &'a [SourceFile],
    diags: Vec<Diagnostic>,
    /// The parameters (after `--set`) and the names `--set` gave.
    params: &'a ParamTable,
    set: &'a [String],
    /// The enclosing `loop:`s of the step being compiled.
    scope: group::Scope,
}

impl<'a> Ctx<'a> {
    fn span<T>(&self, s: &Spanned<T>) -> Range<usize> {
        include::range_of(self.src, s)
    }

    /// Runs `f` with `origin`'s file as the current source; the diagnostics it adds
    /// get the chain of includes as notes.
    fn within<R>(&mut self, origin: &Origin, f: impl FnOnce(&mut Self) -> R) -> R {
        let (before, start) = (self.src, self.diags.len());
        self.src = self.sources.get(origin.source).unwrap_or(before);
        let out = f(self);
        self.src = before;
        for d in &mut self.diags[start..] {
            if d.notes.iter().all(|n| !n.starts_with("included from")) {
                d.notes.extend(origin.chain.iter().cloned());
            }
        }
        out
    }

    /// Start of a scalar's text inside its span (skips an opening quote).
    fn value_start(&self, span: &Range<usize>) -> usize {
        match self.src.text.as_bytes().get(span.start) {
            Some(b'"') | Some(b'\'') => span.start + 1,
            _ => span.start,
        }
    }

    fn byte_size(&mut self, s: &Spanned<String>, what: &str) -> Option<u64> {
        let text = self.substituted(s)?;
        match syntax::parse_byte_size(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.value_error(s, &text, what, e);
                None
            }
        }
    }

    fn duration(&mut self, s: &Spanned<String>, what: &str) -> Option<u64> {
        let text = self.substituted(s)?;
        match syntax::parse_duration(&text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.value_error(s, &text, what, e);
                None
            }
        }
    }

    fn percent(&mut self, s: &Spanned<String>, what: &str) -> Option<f64> {
        let text = self.substituted(s)?;
        match syntax::parse_percent(&text) {
            Ok(v) if v > 100.0 => {
                let span = self.span(s);
                self.error(
                    span,
                    format!("{what} is over 100%"),
                    format!("expected a percentage from 0% to 100%, found {text}"),
                );
                None
            }
            Ok(v) => Some(v),
            Err(e) => {
                self.value_error(s, &text, what, e);
                None
            }
        }
    }

    fn count(&mut self, s: &Spanned<u64>, what: &str, min: u64, max: u64) -> Option<u64> {
        if s.value < min || s.value > max {
            let span = self.span(s);
            self.error(
                span,
                format!("{what} out of range"),
                format!(
                    "expected {what} from {min} to {max}, found {}{}",
                    s.value,
                    s.param
                        .as_ref()
                        .map_or(String::new(), |p| format!(" (from `${{{p}}}`)"))
                ),
            );
            return None;
        }
        Some(s.value)
    }

    /// An optional queue depth (default 1, at most [`MAX_QUEUE_DEPTH`]).
    fn queue_depth(&mut self, s: Option<&Spanned<u64>>) -> Option<u64> {
        s.map_or(Some(1), |s| {
            self.count(s, "queue depth", 1, MAX_QUEUE_DEPTH)
        })
    }

    /// An optional job count (default 1, at most [`MAX_JOBS`]).
    fn jobs(&mut self, s: Option<&Spanned<u64>>) -> Option<u64> {
        s.map_or(Some(1), |s| self.count(s, "jobs", 1, MAX_JOBS))
    }

    fn check_name(&mut self, s: &Spanned<String>, what: &str) {
        let ok = s
            .value
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        let span = self.span(s);
        if !ok {
            self.error(
                span,
                format!("invalid {what}"),
                format!("expected a name of letters, digits and `_` (starting with a letter), found `{}`", s.value),
            );
        } else if RESERVED_NAMES.contains(&s.value.as_str()) {
            self.error(
                span,
                format!("reserved {what}"),
                format!("`{}` is a metric name; choose another", s.value),
            );
        }
    }
}

/// Compiles a spec file's text into a [`Plan`] for a target of the given geometry.
///
/// Errors: every user mistake found, as [`Diagnostics`] (exit code 2 in the CLI).
pub fn compile(src: &SourceFile, geometry: &Geometry) -> Result<Plan, Diagnostics> {
    compile_with(src, geometry, &[])
}

/// [`compile`] with `settings` (`--set name=value`) overriding the spec's parameters.
///
/// Errors: as [`compile`]'s, and a setting that names no parameter.
pub fn compile_with(
    src: &SourceFile,
    geometry: &Geometry,
    settings: &[Setting],
) -> Result<Plan, Diagnostics> {
    let composed = compose(src, settings)?;
    let mut cx = Ctx {
        src,
        sources: &composed.sources,
        diags: Vec::new(),
        params: &composed.params,
        set: &composed.set,
        scope: group::Scope::default(),
    };
    let plan = build(&mut cx, &composed, geometry);
    match plan {
        Some(p) if cx.diags.is_empty() => Ok(p),
        _ => Err(Diagnostics::new(composed.sources.clone(), cx.diags)),
    }
}

fn build(cx: &mut Ctx<'_>, composed: &Composed, geometry: &Geometry) -> Option<Plan> {
    let raw = &composed.raw;
    check_header(cx, raw);
    check_params(cx, raw);
    let lbs = u64::from(geometry.logical_block_size.max(1));
    let size = resolve_target_size(cx, raw, geometry)?;
    let seed = raw.seed.as_ref().map_or(1, |s| s.value);
    let mut expansion = build_steps(cx, raw, group::Frame { size, lbs, seed });
    let (assertions, baseline_rules, baseline_required) =
        rules::build_rules(cx, composed, &expansion);
    let expansion_origins = std::mem::take(&mut expansion.origins);
    let steps = expansion.steps;
    let latency_band_edges_ns = latency_bands(cx, raw.latency_bands.as_ref());
    // Estimates saturate: a spec of absurd sizes says u64::MAX, never a wrapped small number.
    let estimated_duration_ns = steps
        .iter()
        .filter_map(|s| s.estimated_duration_ns)
        .fold(0u64, u64::saturating_add);
    let estimated_bytes = steps
        .iter()
        .filter_map(|s| s.estimated_bytes)
        .fold(0u64, u64::saturating_add);
    let estimate_complete = steps
        .iter()
        .all(|s| s.estimated_bytes.is_some() && s.estimated_duration_ns.is_some());
    Some(Plan {
        schema_version: PLAN_SCHEMA_VERSION,
        spec_name: identity(&raw.name.value, cx.params),
        description: raw.description.clone(),
        spec_digest: digest(cx.sources, cx.params),
        params: cx
            .params
            .iter()
            .map(|(k, v)| (k.clone(), v.text()))
            .collect(),
        seed,
        target: PlanTarget {
            size_bytes: size,
            logical_block_size: geometry.logical_block_size,
            resolved: geometry.resolved,
        },
        steps,
        assertions,
        baseline_rules,
        baseline_required,
        latency_band_edges_ns,
        estimated_duration_ns,
        estimated_bytes,
        estimate_complete,
        targets: target_patterns(cx, raw),
        peers: peer_rule(cx, raw),
        origins: expansion_origins,
        fragments: cx.sources[1..]
            .iter()
            .map(|f| (include::relative_name(&cx.sources[0], f), f.text.clone()))
            .collect(),
        time_scale: 1.0,
        health_sample_interval_ns: health_sample_interval(cx, raw),
    })
}

/// `health_sample_interval:`, ns: default 5 s; from 100 ms (a log read costs the drive
/// little, but more often it would be) to 1 h (less often, a day-long step would go unwatched
/// for most of an hour).
fn health_sample_interval(cx: &mut Ctx<'_>, raw: &RawSpec) -> u64 {
    const DEFAULT_NS: u64 = 5_000_000_000;
    let Some(v) = raw.health_sample_interval.as_ref() else {
        return DEFAULT_NS;
    };
    let Some(ns) = cx.duration(v, "health_sample_interval") else {
        return DEFAULT_NS;
    };
    if !(100_000_000..=3_600_000_000_000).contains(&ns) {
        let span = cx.span(v);
        cx.error(
            span,
            "health_sample_interval out of range",
            format!("expected a duration from 100ms to 1h, found {}", v.value),
        );
        return DEFAULT_NS;
    }
    ns
}

/// The format version, and a name that can name directories.
fn check_header(cx: &mut Ctx<'_>, raw: &RawSpec) {
    if raw.iogate.value != 1 {
        let span = cx.span(&raw.iogate);
        cx.error(
            span,
            "unsupported spec format version",
            format!("expected `iogate: 1`, found `iogate: {}`", raw.iogate.value),
        );
    }
    if !crate::cli_values::is_spec_name(&raw.name.value) {
        let span = cx.span(&raw.name);
        cx.error(
            span,
            "invalid spec name",
            format!(
                "expected letters, digits, `_`, `-` or `.` (it names directories), found `{}`",
                raw.name.value
            ),
        );
    }
    check_name_length(cx, raw);
}

/// The one bound on a spec's name: its identity ([`identity`]) fits
/// [`MAX_IDENTITY_BYTES`], with room for the parameters' digest when it has parameters.
fn check_name_length(cx: &mut Ctx<'_>, raw: &RawSpec) {
    let (most, why) = if cx.params.is_empty() {
        (MAX_IDENTITY_BYTES, "")
    } else {
        (
            MAX_IDENTITY_BYTES - IDENTITY_DIGEST_BYTES,
            " with parameters (the identity `name@<16 hex digits>` must fit too)",
        )
    };
    let len = raw.name.value.len();
    if len > most {
        let span = cx.span(&raw.name);
        cx.error(
            span,
            "spec name too long",
            format!(
                "expected a name of at most {most} bytes{why}: it names the result and \
                 golden directories, found {len} bytes"
            ),
        );
    }
}

/// Every step compiled by its kind; a step name used twice is a diagnostic pointing at
/// the first.
fn build_steps(cx: &mut Ctx<'_>, raw: &RawSpec, frame: group::Frame) -> group::Expansion {
    if raw.steps.value.is_empty() {
        let span = cx.span(&raw.steps);
        cx.error(
            span,
            "a spec needs at least one step",
            "expected a list of steps, found an empty list",
        );
    }
    let mut out = group::Expansion::default();
    group::expand(cx, &raw.steps.value, frame, &mut out);
    out
}

/// `targets:`: each pattern checked as a glob (resolved only when the run starts).
fn target_patterns(cx: &mut Ctx<'_>, raw: &RawSpec) -> Vec<String> {
    let Some(list) = &raw.targets else {
        return Vec::new();
    };
    if list.value.is_empty() {
        let span = cx.span(list);
        cx.error(
            span,
            "`targets:` is empty",
            "expected device paths or glob patterns, found an empty list",
        );
    }
    let mut out = Vec::new();
    for t in &list.value {
        match glob::Pattern::new(&t.value) {
            Ok(_) if t.value.starts_with('/') => out.push(t.value.clone()),
            Ok(_) => {
                let span = cx.span(t);
                cx.error(
                    span,
                    "relative target path",
                    format!(
                        "expected an absolute path or pattern (`/dev/…`), found `{}`",
                        t.value
                    ),
                );
            }
            Err(e) => {
                let span = cx.span(t);
                cx.error(
                    span,
                    "invalid target pattern",
                    format!("expected a glob pattern, found `{}` ({})", t.value, e.msg),
                );
            }
        }
    }
    out
}

/// `peers:`: enforced, its floor from `max_deviation` or `max_deviation_pct` (default
/// 10%) and its side from `direction` (`crate::peer_rule`); without the block, reported
/// at the defaults and not enforced.
fn peer_rule(cx: &mut Ctx<'_>, raw: &RawSpec) -> PeerRule {
    let Some(peers) = &raw.peers else {
        return PeerRule::default();
    };
    let p = &peers.value;
    let text = match &p.max_deviation {
        Some(m) => cx.substituted(m),
        None => None,
    };
    let floor = crate::peer_rule::floor(crate::peer_rule::FloorText {
        percent: text.as_deref(),
        number: p.max_deviation_pct.as_ref().map(|n| n.value),
    });
    let max = match floor {
        Ok(v) => v.unwrap_or(PeerRule::DEFAULT_MAX_DEVIATION_PCT),
        Err(label) => {
            let span = match (&p.max_deviation, &p.max_deviation_pct) {
                (Some(m), _) => cx.span(m),
                (None, Some(n)) => cx.span(n),
                (None, None) => cx.span(peers),
            };
            cx.error(span, "invalid `peers` floor", label);
            PeerRule::DEFAULT_MAX_DEVIATION_PCT
        }
    };
    PeerRule {
        max_deviation_pct: max,
        enforced: true,
        direction: crate::peer_rule::direction(p.direction.as_ref().map(|d| d.value)),
    }
}

fn raw_step_name(s: &RawStep) -> &str {
    match s {
        RawStep::Precondition(p) => p.name.as_ref().map_or("precondition", |n| n.value.as_str()),
        RawStep::Workload(w) => w.name.as_ref().map_or("workload", |n| n.value.as_str()),
        RawStep::Replay(r) => r.name.as_ref().map_or("replay", |n| n.value.as_str()),
        RawStep::Purge(p) => p.name.as_ref().map_or("purge", |n| n.value.as_str()),
        RawStep::Idle(i) => i.name.as_ref().map_or("idle", |n| n.value.as_str()),
        RawStep::Sweep(w) => w.name.as_ref().map_or("sweep", |n| n.value.as_str()),
        RawStep::Repeat(r) => r.name.as_ref().map_or("repeat", |n| n.value.as_str()),
        RawStep::PowerCycle(p) => p.name.as_ref().map_or("power_cycle", |n| n.value.as_str()),
        RawStep::ZoneCheck(z) => z.name.as_ref().map_or("zone_check", |n| n.value.as_str()),
        RawStep::Loop(l) => l.name.as_ref().map_or("loop", |n| n.value.as_str()),
        RawStep::Include(_) | RawStep::Included(_) => "include",
    }
}

/// `sha256:<hex>` of a spec's text: recorded in results and baselines.
pub fn spec_digest(text: &str) -> String {
    digest(&[SourceFile::new("", text)], &ParamTable::new())
}

/// `sha256:<hex>` of a spec's text (`sources[0]`); then, after a NUL, of each fragment
/// it includes (its path relative to the spec's directory, and its text) and of each
/// parameter's `name=value`: editing a fragment, or a run at `--set queue_depth=32`,
/// never carries the digest of the spec as it was. A spec without fragments or
/// parameters has the digest of its text alone.
fn digest(sources: &[SourceFile], params: &ParamTable) -> String {
    let mut h = Sha256::new();
    let Some((spec, fragments)) = sources.split_first() else {
        return String::new();
    };
    h.update(spec.text.as_bytes());
    for f in fragments {
        let name = include::relative_name(spec, f);
        h.update(format!("\0fragment {name}\n").as_bytes());
        h.update(f.text.as_bytes());
    }
    if !params.is_empty() {
        h.update(b"\0params\n");
        for (k, v) in params {
            h.update(format!("{k}={}\n", v.text()).as_bytes());
        }
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// Longest spec identity, bytes: it is one path component of the result directory
/// (`results/<identity>/`) and of the golden file (`<golden>/<identity>/<key>.json`).
/// `check_header` holds a spec's name to it, [`identity`] its parameters.
pub const MAX_IDENTITY_BYTES: usize = 200;

/// What a spec with parameters adds to its name at most: `@` and 16 hex digits.
const IDENTITY_DIGEST_BYTES: usize = 17;

/// A spec's identity for results, baselines and history: its name, and with parameters
/// `name@k=v,k=v` (sorted by name), so that two parameter sets of one spec are two
/// series. Characters other than letters, digits and `._+-` in a value are written
/// `%XX`, so the identity stays one path component; one over [`MAX_IDENTITY_BYTES`] is
/// `name@` and the first 16 hex digits of the parameters' digest.
pub fn identity(name: &str, params: &ParamTable) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    let enc = |v: String| {
        let mut out = String::new();
        for b in v.bytes() {
            if b.is_ascii_alphanumeric() || b"._+-".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    let pairs: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", enc(v.text())))
        .collect();
    let id = format!("{name}@{}", pairs.join(","));
    if id.len() <= MAX_IDENTITY_BYTES {
        return id;
    }
    let d = digest(&[SourceFile::new("", "")], params);
    let hex = d.strip_prefix("sha256:").unwrap_or(&d);
    format!("{name}@{}", &hex[..16])
}

/// `params:`: names as names, values that are scalars; a loop variable may not reuse
/// one (`compile::group` checks that).
/// `params:`: each name one `${name}` can write (letters, digits and `_`, not starting
/// with a digit; metric names are allowed: a parameter is no step). A loop variable may
/// not reuse one (`compile::group` checks that).
fn check_params(cx: &mut Ctx<'_>, raw: &RawSpec) {
    let Some(p) = &raw.params else { return };
    for (k, _) in &p.value.0 {
        let mut chars = k.value.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            let span = cx.span(k);
            cx.error(
                span,
                "invalid parameter name",
                format!(
                    "expected letters, digits and `_` (not starting with a digit), found `{}`",
                    k.value
                ),
            );
        }
    }
}

fn resolve_target_size(cx: &mut Ctx<'_>, raw: &RawSpec, g: &Geometry) -> Option<u64> {
    let lbs = u64::from(g.logical_block_size.max(1));
    let size_field = raw.target.as_ref().and_then(|t| t.value.size.as_ref());
    match size_field {
        Some(s) => {
            let size = cx.byte_size(s, "target size")?;
            let span = cx.span(s);
            if size == 0 || size % lbs != 0 {
                cx.error(
                    span,
                    "target size is not a multiple of the logical block size",
                    format!("expected a non-zero multiple of {lbs}B, found {size}B"),
                );
                return None;
            }
            if !g.growable && size > g.capacity_bytes {
                cx.error(
                    span,
                    "target size is larger than the target",
                    format!(
                        "expected at most {} (the target's capacity), found {}",
                        crate::units::ByteSize(g.capacity_bytes),
                        s.value
                    ),
                );
                return None;
            }
            Some(size)
        }
        None if g.capacity_bytes > 0 => Some(g.capacity_bytes - g.capacity_bytes % lbs),
        None => {
            let span = raw.target.as_ref().map_or(0..0, |t| cx.span(t));
            cx.error_note(
                span,
                "the target's size is unknown",
                "expected `target: { size: ... }`",
                "without --target (or with a target file that does not exist yet), iogate creates a file of `target.size`",
            );
            None
        }
    }
}
