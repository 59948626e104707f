//! One fio job's zoned block device options (`zonemode=zbd`, fio's HOWTO "zonemode",
//! "max_open_zones" … "zone_reset_frequency", and the io_uring_cmd engine's
//! `write_mode`) → the workload's `zones:` (the spec's `RawZones`). A job without
//! `zonemode=zbd` keeps the generic handling of its zone options (`zonemode=strided` and
//! `none` are not converted). Child of `convert`; values read with the parent's helpers.

use super::super::super::format_pct;
use super::super::super::yaml::{MixOut, WorkloadOut};
use super::super::{Job, Opt};
use super::Shape;
use crate::diag::Severity;

/// fio's largest `max_open_zones` and `job_max_open_zones` (`ZBD_MAX_WRITE_ZONES`).
const FIO_MAX_WRITE_ZONES: u64 = 4096;

/// A fraction from 0 to 1, as fio reads `zone_reset_threshold` and `zone_reset_frequency`.
fn fraction(v: &str) -> Option<f64> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f))
}

impl Job<'_> {
    /// `zonemode=zbd` and its options → `w.zones` (key, spec text); `write_mode` of the
    /// io_uring_cmd engine → `write_command`. Values fio refuses or iogate cannot express
    /// are warnings on their line, and the key is left out (the spec's default applies).
    pub(super) fn zoned(&mut self, w: &mut WorkloadOut, numjobs: u64, shape: &Shape) {
        let zbd = self
            .opts
            .iter()
            .rev()
            .find(|o| o.key == "zonemode")
            .is_some_and(|o| o.value.as_deref().map(str::trim) == Some("zbd"));
        if !zbd {
            self.write_mode(w, zbd, shape);
            return;
        }
        if let Some(o) = self.take("zonemode") {
            self.diag(
                o.span,
                Severity::Note,
                "zonemode=zbd: the workload runs zoned on a zoned target".into(),
                "iogate writes each zone at its write pointer and reads the zones from the drive; fio's zones emulated on a regular file are not converted".into(),
            );
        }
        self.max_open(w, numjobs);
        self.write_mode(w, zbd, shape);
        self.reset_at(w);
        if self.flag("read_beyond_wp") {
            w.zones.push(("reads", "anywhere".into()));
        }
        for key in ["zonesize", "zonecapacity"] {
            if let Some(o) = self.take(key) {
                self.warn(&o, "iogate reads the zones' size and capacity from the drive; fio uses this only to emulate zones on a regular file");
            }
        }
        if let Some(o) = self.take("zonerange") {
            self.note(&o, "fio ignores it with zonemode=zbd");
        }
        if let Some((v, o)) = self.value("zoneskip") {
            if v.trim() == "0" {
                self.note(&o, "fio requires 0 with zonemode=zbd");
            } else {
                self.bad_value(&o, "0 (fio refuses any other zoneskip with zonemode=zbd)");
            }
        }
        if let Some(o) = self.take("ignore_zone_limits") {
            self.note(&o, "iogate does not hold `zones.max_open` to the drive's limits: above them the drive refuses writes");
        }
    }

    /// A note that `o` has no iogate counterpart to set.
    fn note(&mut self, o: &Opt, why: &str) {
        self.diag(
            o.span.clone(),
            Severity::Note,
            format!("fio option `{}` has no iogate counterpart to set", o.key),
            why.into(),
        );
    }

    /// `max_open_zones` (over all jobs, as iogate's `max_open`) and `job_max_open_zones`
    /// (per job: at most N × numjobs over all jobs) → `max_open`.
    fn max_open(&mut self, w: &mut WorkloadOut, numjobs: u64) {
        let limit = format!("a whole number from 1 to {FIO_MAX_WRITE_ZONES}");
        let in_range = |v: &str| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= FIO_MAX_WRITE_ZONES)
        };
        let (mut max_open, mut at) = (None, 0..0);
        if let Some((v, o)) = self.value("max_open_zones") {
            match in_range(&v) {
                Some(0) => self.bad_value(
                    &o,
                    &format!("{limit} (0, no limit, is not converted: iogate's default is the drive's limit)"),
                ),
                Some(n) => (max_open, at) = (Some(n), o.span.clone()),
                None => self.bad_value(&o, &limit),
            }
        }
        if let Some((v, o)) = self.value("job_max_open_zones") {
            match in_range(&v) {
                Some(0) => self.note(&o, "0 is no limit per job, fio's default"),
                Some(n) => {
                    let total = n.saturating_mul(numjobs);
                    max_open = Some(max_open.map_or(total, |m: u64| m.min(total)));
                    at = o.span.clone();
                    self.diag(
                        o.span.clone(),
                        Severity::Warning,
                        "fio option `job_max_open_zones` is converted to a limit over all jobs".into(),
                        format!("iogate's `zones.max_open` counts every job's zones together: at most {n} × {numjobs} jobs, but one job may write more than {n}"),
                    );
                }
                None => self.bad_value(&o, &format!("{limit}, or 0 for no limit")),
            }
        }
        if let Some(n) = max_open {
            w.zones.push(("max_open", n.to_string()));
            self.diag(
                at,
                Severity::Warning,
                format!("`zones.max_open: {n}` writes {n} zones at once whatever the drive allows"),
                "fio refuses a max_open_zones above the drive's limit; iogate writes that many zones and the drive refuses writes past its limit (drop `max_open` to use the drive's own)".into(),
            );
        }
    }

    /// `zone_reset_threshold` (default 0) with `zone_reset_frequency` above 0 → `reset_at`;
    /// without a frequency fio makes no resets by threshold.
    fn reset_at(&mut self, w: &mut WorkloadOut) {
        let expected = "a fraction from 0 to 1";
        let threshold = self.value("zone_reset_threshold");
        let frequency = self.value("zone_reset_frequency");
        let t = match &threshold {
            Some((v, o)) => match fraction(v) {
                Some(t) => Some(t),
                None => {
                    self.bad_value(o, expected);
                    None
                }
            },
            None => None,
        };
        let f = match &frequency {
            Some((v, o)) => match fraction(v) {
                Some(f) => Some(f),
                None => {
                    self.bad_value(o, expected);
                    None
                }
            },
            None => Some(0.0),
        };
        let threshold_bad = threshold.is_some() && t.is_none();
        let (Some(f), false) = (f, threshold_bad) else {
            // One of the two is not converted: the other, read fine, is left out with it.
            let fine = match (&threshold, &frequency) {
                (Some((_, o)), _) if !threshold_bad => Some(o.clone()),
                (_, Some((_, o))) if f.is_some() => Some(o.clone()),
                _ => None,
            };
            if let Some(o) = fine {
                self.warn(
                    &o,
                    "converted only with a valid `zone_reset_threshold` and `zone_reset_frequency`",
                );
            }
            return;
        };
        if f == 0.0 {
            if let Some((_, o)) = &threshold {
                self.note(
                    o,
                    "without a `zone_reset_frequency` above 0 (fio's default is 0) fio makes no resets by threshold",
                );
            }
            return;
        }
        w.zones
            .push(("reset_at", format_pct(t.unwrap_or(0.0) * 100.0)));
        if f < 1.0 {
            if let Some((_, o)) = frequency {
                self.warn(&o, format!("fio resets a zone once in every {} writes past the threshold; iogate resets every zone that fills past it (`zones.reset_at`)", format_count(1.0 / f)));
            }
        }
    }

    /// `write_mode` of the io_uring_cmd engine: `write` is iogate's default,
    /// `zone_append` (fio: with zonemode=zbd) → `write_command: zone_append`.
    fn write_mode(&mut self, w: &mut WorkloadOut, zbd: bool, shape: &Shape) {
        let Some((v, o)) = self.value("write_mode") else {
            return;
        };
        match v.trim() {
            "write" => {}
            "zone_append" if zbd && shape.passthrough => {
                w.zones.push(("write_command", "zone_append".into()));
            }
            "zone_append" if !zbd => {
                self.warn(&o, "fio refuses write_mode=zone_append without zonemode=zbd");
            }
            "zone_append" => self.warn(
                &o,
                "an option of the io_uring_cmd engine (iogate's `engine: passthrough`)",
            ),
            modes => match write_modes(modes) {
                // fio takes write_mode only with its io_uring_cmd engine.
                Some(_) if !shape.passthrough => self.warn(
                    &o,
                    "an option of the io_uring_cmd engine (iogate's `engine: passthrough`): converted as plain writes",
                ),
                Some(split) if shape.read_pct == 0.0 => w.mix = split_writes(&w.mix, &split),
                Some(_) => self.warn(
                    &o,
                    "write_mode with reads in the mix: only a job that only writes is converted to command lines",
                ),
                None => self.warn(
                    &o,
                    "expected write, zeroes, uncor or verify, or a ratio of them (write/60:zeroes/40) summing to 100",
                ),
            },
        }
    }
}

/// fio's `write_mode` of the io_uring_cmd engine as (mix line `op:`, share of writes in
/// percent): one mode (`zeroes`) or a ratio (`write/60:zeroes/30:uncor/10`, summing to
/// 100); None when a mode is unknown or the shares do not sum to 100.
fn write_modes(v: &str) -> Option<Vec<(&'static str, f64)>> {
    let parts: Vec<&str> = v.split(':').map(str::trim).collect();
    let single = parts.len() == 1;
    let mut out = Vec::new();
    for p in parts {
        let (mode, pct) = match p.split_once('/') {
            Some((m, n)) => (
                m.trim(),
                n.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)?,
            ),
            None if single => (p, 100.0),
            None => return None,
        };
        let op = match mode {
            "write" => "write",
            "zeroes" => "write_zeroes",
            "uncor" => "write_uncorrectable",
            "verify" => "verify",
            _ => return None,
        };
        // A mode named twice (`write/60:write/40`) is one mode with both shares.
        match out.iter_mut().find(|(o, _)| *o == op) {
            Some(seen) => seen.1 += pct,
            None => out.push((op, pct)),
        }
    }
    let total: f64 = out.iter().map(|(_, p)| p).sum();
    ((total - 100.0).abs() < 1e-6).then_some(out)
}

/// Each write line of `mix` split into one line per write mode, each with its share of
/// the line's weight (a line without a weight holds 100%).
fn split_writes(mix: &[MixOut], modes: &[(&'static str, f64)]) -> Vec<MixOut> {
    let mut out = Vec::new();
    for l in mix {
        if !matches!(l.op, None | Some("write")) {
            out.push(l.clone());
            continue;
        }
        let weight = l
            .weight
            .as_deref()
            .and_then(|w| w.trim_end_matches('%').parse::<f64>().ok())
            .unwrap_or(100.0);
        let single = modes.len() == 1 && l.weight.is_none();
        for &(op, share) in modes.iter().filter(|m| m.1 > 0.0) {
            out.push(MixOut {
                weight: (!single).then(|| format_pct(weight * share / 100.0)),
                op: Some(op),
                ..l.clone()
            });
        }
    }
    out
}

/// `n` without a fraction when it is whole (`2`, `3.33`).
fn format_count(n: f64) -> String {
    let r = (n * 100.0).round() / 100.0;
    format!("{r}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_mode_named_twice_is_one_mode() {
        assert_eq!(
            write_modes("write/60:write/40"),
            Some(vec![("write", 100.0)])
        );
        assert_eq!(
            write_modes("zeroes/30:write/50:zeroes/20"),
            Some(vec![("write_zeroes", 50.0), ("write", 50.0)])
        );
        assert_eq!(write_modes("write/60:write/60"), None);
    }
}
