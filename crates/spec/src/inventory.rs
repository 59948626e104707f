//! A campaign's inventory: the drives a lab expects to run a build, each a host and a
//! drive (by serial, by the target path `run` was given, or by model with a count), with
//! the specs each must run. Read from a version-controlled YAML file (serde-saphyr, as a
//! spec is, through `compile::yaml`), checked whole, every mistake a located diagnostic;
//! its JSON Schema is [`inventory_schema`]. The report crate's `campaign` matches the
//! history store's runs against it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::compile::include::range_of;
use crate::compile::yaml::parse_yaml_as;
use crate::diag::{Diagnostic, Diagnostics, SourceFile};
use crate::document::Spanned;

/// Most drives one inventory entry may expect (`count:`).
pub const MAX_COUNT: u64 = 4096;

/// An inventory file as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawInventory {
    /// The inventory's name (`lab-a`).
    pub inventory: Spanned<String>,
    /// How far a drive may deviate from its peers (drives of its model running the
    /// same spec, across the whole campaign) before it is an outlier.
    #[serde(default)]
    pub peers: Option<RawPeers>,
    /// The expected drives.
    pub drives: Vec<Spanned<RawDrive>>,
}

/// `peers:` of an inventory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPeers {
    /// The floor of the peer rule, percent of the peers' centre (default 10): a
    /// difference of at most this never makes an outlier; a larger one does only when
    /// the peers' noise does not explain it (README, "Peers").
    #[serde(default)]
    #[schemars(range(max = 1000), extend("exclusiveMinimum" = 0))]
    pub max_deviation_pct: Option<Spanned<f64>>,
    /// The same floor as a percentage (`10%`), as specs write it; give one of the two.
    #[serde(default)]
    #[schemars(with = "Option<crate::schema::PercentText>")]
    pub max_deviation: Option<Spanned<String>>,
    /// Which side fails: `worse` (default: lower IOPS or bandwidth, higher latency; a
    /// better drive is a note) or `either`.
    #[serde(default)]
    pub direction: Option<Spanned<crate::plan::PeerDirection>>,
    /// The step figures compared (default: `iops`, `bandwidth`, `latency.mean`,
    /// `latency.p99`, as a run over several drives compares them).
    #[serde(default)]
    pub metrics: Option<Spanned<Vec<Spanned<String>>>>,
}

/// The step figures peers may be compared on, as metric paths name them after the step.
pub const PEER_METRICS: &[&str] = &[
    "iops",
    "bandwidth",
    "latency.mean",
    "latency.p50",
    "latency.p90",
    "latency.p99",
    "latency.p99.9",
];

/// Most drives an inventory expects over all its entries (each entry's `count` is
/// bounded too): what `campaign status` lists stays bounded.
pub const MAX_TOTAL_DRIVES: u64 = 65_536;

/// The figures compared without `peers.metrics`.
pub const DEFAULT_PEER_METRICS: &[&str] = &["iops", "bandwidth", "latency.mean", "latency.p99"];

/// One entry of `drives:`: a host and one drive (`serial` or `target`), or several
/// (`model`, or a `serial` glob, with `count`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDrive {
    /// The host, as runs record it (`run --host`, else the host's name).
    pub host: Spanned<String>,
    /// The drive's serial number, or a glob (`S5GXNA*`) with `count`.
    #[serde(default)]
    pub serial: Option<Spanned<String>>,
    /// The target path `run` was given (`/dev/sdb`), for drives without a serial.
    #[serde(default)]
    pub target: Option<Spanned<String>>,
    /// The device model (or a glob), with `count`: any drives of it on the host.
    #[serde(default)]
    pub model: Option<Spanned<String>>,
    /// How many drives the entry expects (default 1).
    #[serde(default)]
    #[schemars(range(min = 1, max = 4096))]
    pub count: Option<Spanned<u64>>,
    /// The specs each drive must run, by name (a spec's `name:`; with parameters as runs
    /// record it, `name@k=v`).
    pub specs: Vec<Spanned<String>>,
}

/// A checked inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct Inventory {
    /// Its name.
    pub name: String,
    /// The peer rule's floor, percent of the peers' centre.
    pub max_deviation_pct: f64,
    /// The side that fails.
    pub direction: crate::plan::PeerDirection,
    /// The step figures compared ([`PEER_METRICS`]).
    pub peer_metrics: Vec<String>,
    /// The expected drives, in file order.
    pub drives: Vec<Expected>,
}

/// One entry of a checked inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// The host.
    pub host: String,
    /// Which drives of the host it names.
    pub selector: Selector,
    /// How many drives it expects.
    pub count: u64,
    /// The specs each must run.
    pub specs: Vec<String>,
    /// The entry's line in the file (1-based), for messages.
    pub line: usize,
}

/// How an entry names its drives.
#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    /// By serial number: exact, or a glob (`*`, `?`, `[…]`).
    Serial(String),
    /// By the target path `run` was given.
    Target(String),
    /// By model: exact, or a glob.
    Model(String),
}

impl Selector {
    /// Whether a drive of this serial, target and model is one the selector names. A
    /// drive that reports no model (`None`, or empty) is never named by a model glob,
    /// `*` included: a loop device or an unattached slot is not a drive of any model.
    pub fn matches(&self, serial: Option<&str>, target: Option<&str>, model: Option<&str>) -> bool {
        let glob = |pattern: &str, text: &str| {
            glob::Pattern::new(pattern).map_or(pattern == text, |p| p.matches(text))
        };
        match self {
            Selector::Serial(p) => serial.is_some_and(|s| glob(p, s)),
            Selector::Target(t) => serial.is_none() && target == Some(t.as_str()),
            Selector::Model(p) => model.is_some_and(|m| !m.is_empty() && glob(p, m)),
        }
    }

    /// Whether it names exactly one drive (a target, a serial without glob characters):
    /// such entries are matched before patterns, so that a pattern never takes the drive
    /// an exact entry names.
    pub fn is_exact(&self) -> bool {
        match self {
            Selector::Target(_) => true,
            Selector::Serial(s) => !s.contains(['*', '?', '[']),
            Selector::Model(_) => false,
        }
    }

    /// How the selector is shown: `serial S…`, `target /dev/sdb`, `model M`.
    pub fn describe(&self) -> String {
        match self {
            Selector::Serial(s) => format!("serial {s}"),
            Selector::Target(t) => format!("target {t}"),
            Selector::Model(m) => format!("model {m}"),
        }
    }
}

/// The JSON Schema of an inventory file (draft 2020-12, `schema/inventory.schema.json`).
pub fn inventory_schema() -> schemars::Schema {
    let mut schema = crate::schema::generator().into_root_schema_for::<RawInventory>();
    schema.insert(
        "$id".into(),
        "https://iogate.dev/schema/inventory.schema.json".into(),
    );
    schema.insert("title".into(), "iogate campaign inventory".into());
    schema
}

/// Reads and checks an inventory. Errors: every mistake found, located.
pub fn parse_inventory(src: &SourceFile) -> Result<Inventory, Diagnostics> {
    let raw: RawInventory = parse_yaml_as(src, "inventory")?;
    let mut diags = Vec::new();
    let name_at = range_of(src, &raw.inventory);
    if let Err(e) = crate::cli_values::name(&raw.inventory.value) {
        diags.push(src.diagnostic(name_at.clone(), "invalid inventory name", e));
    }
    let (max_deviation_pct, peer_metrics) = peers(src, raw.peers.as_ref(), &mut diags);
    if raw.drives.is_empty() {
        diags.push(src.diagnostic(
            name_at,
            "empty inventory",
            "expected at least one drive under `drives:`, found none",
        ));
    }
    let mut drives = Vec::new();
    for d in &raw.drives {
        if let Some(e) = drive(src, d, &mut diags) {
            drives.push(e);
        }
    }
    duplicates(src, &raw.drives, &mut diags);
    let total: u64 = drives.iter().map(|d: &Expected| d.count).sum();
    if total > MAX_TOTAL_DRIVES {
        diags.push(src.diagnostic(
            range_of(src, &raw.inventory),
            "too many drives",
            format!("expected at most {MAX_TOTAL_DRIVES} drives over all entries, found {total}"),
        ));
    }
    if diags.is_empty() {
        Ok(Inventory {
            name: raw.inventory.value,
            max_deviation_pct,
            direction: crate::peer_rule::direction(
                raw.peers
                    .as_ref()
                    .and_then(|p| p.direction.as_ref())
                    .map(|d| d.value),
            ),
            peer_metrics,
            drives,
        })
    } else {
        Err(Diagnostics::new(vec![src.clone()], diags))
    }
}

/// `peers:` checked: the outlier threshold and the figures compared.
fn peers(
    src: &SourceFile,
    peers: Option<&RawPeers>,
    diags: &mut Vec<Diagnostic>,
) -> (f64, Vec<String>) {
    let text = crate::peer_rule::FloorText {
        percent: peers
            .and_then(|p| p.max_deviation.as_ref())
            .map(|p| p.value.as_str()),
        number: peers
            .and_then(|p| p.max_deviation_pct.as_ref())
            .map(|p| p.value),
    };
    let max_deviation_pct = match crate::peer_rule::floor(text) {
        Ok(v) => v.unwrap_or(crate::plan::PeerRule::DEFAULT_MAX_DEVIATION_PCT),
        Err(label) => {
            let at = peers.and_then(|p| {
                p.max_deviation
                    .as_ref()
                    .map(|m| range_of(src, m))
                    .or_else(|| p.max_deviation_pct.as_ref().map(|m| range_of(src, m)))
            });
            diags.push(src.diagnostic(at.unwrap_or(0..0), "invalid peers", label));
            crate::plan::PeerRule::DEFAULT_MAX_DEVIATION_PCT
        }
    };
    let Some(list) = peers.and_then(|p| p.metrics.as_ref()) else {
        let metrics = DEFAULT_PEER_METRICS.iter().map(|m| m.to_string()).collect();
        return (max_deviation_pct, metrics);
    };
    if list.value.is_empty() {
        diags.push(src.diagnostic(
            range_of(src, list),
            "invalid peers",
            "expected at least one metric under peers.metrics, found none",
        ));
    }
    let mut seen = Vec::new();
    for m in &list.value {
        if !PEER_METRICS.contains(&m.value.as_str()) {
            diags.push(src.diagnostic(
                range_of(src, m),
                "unknown peer metric",
                format!(
                    "expected one of {}, found {:?}",
                    PEER_METRICS.join(", "),
                    m.value
                ),
            ));
        } else if seen.contains(&&m.value) {
            diags.push(src.diagnostic(
                range_of(src, m),
                "duplicate peer metric",
                format!("`{}` is listed twice", m.value),
            ));
        }
        seen.push(&m.value);
    }
    (
        max_deviation_pct,
        list.value.iter().map(|m| m.value.clone()).collect(),
    )
}

/// One entry checked; None (with diagnostics) when it is wrong.
fn drive(src: &SourceFile, d: &Spanned<RawDrive>, diags: &mut Vec<Diagnostic>) -> Option<Expected> {
    let before = diags.len();
    let at = range_of(src, d);
    let raw = &d.value;
    if let Err(e) = crate::cli_values::name(&raw.host.value) {
        diags.push(src.diagnostic(range_of(src, &raw.host), "invalid host", e));
    }
    let named: Vec<(&str, &Spanned<String>)> = [
        ("serial", &raw.serial),
        ("target", &raw.target),
        ("model", &raw.model),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
    .collect();
    let selector = match named.as_slice() {
        [(kind, v)] => {
            let text = v.value.clone();
            if text.is_empty() || text.chars().any(char::is_control) {
                diags.push(src.diagnostic(
                    range_of(src, v),
                    format!("invalid {kind}"),
                    format!("expected a {kind} of printable characters, found {text:?}"),
                ));
            }
            if *kind != "target" {
                if let Err(e) = glob::Pattern::new(&text) {
                    diags.push(src.diagnostic(
                        range_of(src, v),
                        format!("invalid {kind} pattern"),
                        format!("expected a {kind} or a glob (`*`, `?`, `[…]`): {e}"),
                    ));
                }
            } else if !text.starts_with('/') {
                diags.push(src.diagnostic(
                    range_of(src, v),
                    "invalid target",
                    format!("expected an absolute path (`/dev/sdb`), found {text:?}"),
                ));
            }
            match *kind {
                "serial" => Selector::Serial(text),
                // `//dev/./sdb` is `/dev/sdb`, as runs record their targets.
                "target" => Selector::Target(
                    crate::files::normal_path(std::path::Path::new(&text))
                        .display()
                        .to_string(),
                ),
                _ => Selector::Model(text),
            }
        }
        _ => {
            let found = if named.is_empty() {
                "none".to_string()
            } else {
                named
                    .iter()
                    .map(|(k, _)| *k)
                    .collect::<Vec<_>>()
                    .join(" and ")
            };
            diags.push(src.diagnostic(
                at.clone(),
                if named.is_empty() {
                    "unnamed drive"
                } else {
                    "ambiguous drive"
                },
                format!(
                    "expected one of `serial`, `target` or `model` naming the drive, found {found}"
                ),
            ));
            Selector::Target(String::new())
        }
    };
    let count = count(
        src,
        at.clone(),
        raw.count.as_ref().map(|c| c.value),
        &selector,
        diags,
    );
    let specs = specs(src, at, &raw.specs, diags);
    (diags.len() == before).then(|| Expected {
        host: raw.host.value.clone(),
        selector,
        count,
        specs,
        line: d.referenced.line() as usize,
    })
}

fn count(
    src: &SourceFile,
    at: std::ops::Range<usize>,
    count: Option<u64>,
    selector: &Selector,
    diags: &mut Vec<Diagnostic>,
) -> u64 {
    let single = selector.is_exact();
    match count {
        Some(n) if n == 0 || n > MAX_COUNT => diags.push(src.diagnostic(
            at,
            "invalid count",
            format!("expected a count from 1 to {MAX_COUNT}, found {n}"),
        )),
        Some(n) if n > 1 && single => diags.push(src.diagnostic(
            at,
            "invalid count",
            format!(
                "{} names one drive, found count {n}: a count goes with a model or a serial glob",
                selector.describe()
            ),
        )),
        _ => {}
    }
    count.unwrap_or(1)
}

fn specs(
    src: &SourceFile,
    at: std::ops::Range<usize>,
    specs: &[Spanned<String>],
    diags: &mut Vec<Diagnostic>,
) -> Vec<String> {
    if specs.is_empty() {
        diags.push(src.diagnostic(
            at,
            "no specs",
            "expected at least one spec under `specs:`, found none",
        ));
    }
    let mut seen: BTreeMap<&str, ()> = BTreeMap::new();
    for s in specs {
        // `name` or `name@k=v,…` as runs record a spec with parameters; the name part is
        // a file name to the host script (`<specs>/<name>.yaml`).
        let (name, params) = match s.value.split_once('@') {
            Some((n, p)) => (n, Some(p)),
            None => (s.value.as_str(), None),
        };
        // Parameters as runs record them: one or more `k=v`, comma-separated.
        let params_ok = params.is_none_or(|p| {
            p.split(',')
                .all(|kv| kv.split_once('=').is_some_and(|(k, _)| !k.is_empty()))
        });
        if !crate::cli_values::is_spec_name(name)
            || !params_ok
            || s.value.chars().any(char::is_control)
        {
            diags.push(src.diagnostic(
                range_of(src, s),
                "invalid spec name",
                format!(
                    "expected a spec's name (letters, digits, `_`, `-` or `.`, not starting \
                     with `.`; with parameters `name@k=v`), found {:?}",
                    s.value
                ),
            ));
        } else if seen.insert(&s.value, ()).is_some() {
            diags.push(src.diagnostic(
                range_of(src, s),
                "duplicate spec",
                format!("`{}` is listed twice for this drive", s.value),
            ));
        }
    }
    specs.iter().map(|s| s.value.clone()).collect()
}

/// A drive named twice (the same host with the same serial or target, the target in
/// `files::normal_path`'s form, or the same model or serial pattern; one serial on two
/// hosts) would be expected twice and could never be complete.
fn duplicates(src: &SourceFile, drives: &[Spanned<RawDrive>], diags: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<(String, &str, String), usize> = BTreeMap::new();
    let mut serials: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for d in drives {
        let r = &d.value;
        let named = [
            ("serial", &r.serial),
            ("target", &r.target),
            ("model", &r.model),
        ]
        .into_iter()
        .find_map(|(k, v)| v.as_ref().map(|v| (k, v.value.clone())));
        let Some((kind, mut value)) = named else {
            continue;
        };
        if kind == "target" {
            value = crate::files::normal_path(std::path::Path::new(&value))
                .display()
                .to_string();
        }
        let line = d.referenced.line() as usize;
        let exact_serial = kind == "serial" && !value.contains(['*', '?', '[']);
        if let Some((host, first)) = serials.get(&value).filter(|_| exact_serial) {
            if *host != r.host.value {
                diags.push(
                    src.diagnostic(
                        range_of(src, d),
                        "duplicate drive",
                        format!(
                            "serial {value} is listed on host {} and on host {host}: a \
                             serial names one drive",
                            r.host.value
                        ),
                    )
                    .with_note(format!("first listed at line {first}")),
                );
                continue;
            }
        } else if exact_serial {
            serials.insert(value.clone(), (r.host.value.clone(), line));
        }
        let key = (r.host.value.clone(), kind, value.clone());
        if let Some(&first) = seen.get(&key) {
            diags.push(
                src.diagnostic(
                    range_of(src, d),
                    "duplicate drive",
                    format!("host {} lists {kind} {value} twice", r.host.value),
                )
                .with_note(format!("first listed at line {first}")),
            );
        } else {
            seen.insert(key, line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Selector;

    #[test]
    fn a_model_glob_never_names_a_drive_without_a_model() {
        let any = Selector::Model("*".into());
        assert!(any.matches(None, Some("/dev/sda"), Some("SAMSUNG MZQL2")));
        assert!(!any.matches(None, Some("/dev/loop0"), None));
        assert!(!any.matches(None, Some("/dev/loop0"), Some("")));
        let serial = Selector::Serial("S5*".into());
        assert!(serial.matches(Some("S5GX"), None, None));
        assert!(!serial.matches(None, None, Some("S5")));
        let target = Selector::Target("/dev/sdb".into());
        assert!(target.matches(None, Some("/dev/sdb"), None));
        assert!(!target.matches(Some("S1"), Some("/dev/sdb"), None));
    }
}
