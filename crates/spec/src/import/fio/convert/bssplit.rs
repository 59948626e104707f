//! fio's `bssplit` with a split per data direction (`reads,writes,trims`) as mix lines.
//! fio reads the commas as its `str_split_parse` does (fio's options.c): one split serves
//! every direction; two are the reads', then the writes' and the trims' alike; three,
//! one each. When the directions a job has use one split, `convert::mix` keeps its
//! lines as before; otherwise each direction's block sizes become lines of their own
//! (`read: 100%`, `read: 0%`, `op: trim`), each weighted by its direction's share of the
//! requests times its size's share. Child of `convert`; the pairs themselves are parsed
//! by `fio_values::parse_bssplit`.

use super::super::super::fio_values::parse_bssplit;
use super::super::super::yaml::MixOut;
use super::super::super::{format_bytes, format_pct};

/// One (block size in bytes, percent of the direction's requests) list per direction.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Splits {
    pub read: Vec<(u64, f64)>,
    pub write: Vec<(u64, f64)>,
    pub trim: Vec<(u64, f64)>,
}

/// A direction's lines: its share, its split, `read:` text and `op:`.
type Direction<'a> = (f64, &'a [(u64, f64)], &'static str, Option<&'static str>);

/// The share of requests, in percent, of each direction of a job.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shares {
    pub read_pct: f64,
    pub write_pct: f64,
    pub trim_pct: f64,
}

impl Shares {
    /// From the job's read share of its reads and writes and its trim share of all
    /// requests (`rw=trimwrite`: 50).
    pub fn new(read_pct: f64, trim_pct: f64) -> Shares {
        let rest = 100.0 - trim_pct.clamp(0.0, 100.0);
        Shares {
            read_pct: rest * read_pct / 100.0,
            write_pct: rest * (100.0 - read_pct) / 100.0,
            trim_pct: trim_pct.clamp(0.0, 100.0),
        }
    }
}

impl Splits {
    /// `bssplit`'s value: None when a part is malformed (empty included) or there are
    /// more than three.
    pub fn parse(v: &str, kb_base: u64) -> Option<Splits> {
        let parts: Vec<Vec<(u64, f64)>> = v
            .split(',')
            .map(|p| parse_bssplit(p, kb_base))
            .collect::<Option<_>>()?;
        let (read, write, trim) = match parts.as_slice() {
            [all] => (all.clone(), all.clone(), all.clone()),
            [r, w] => (r.clone(), w.clone(), w.clone()),
            [r, w, t] => (r.clone(), w.clone(), t.clone()),
            _ => return None,
        };
        Some(Splits { read, write, trim })
    }

    /// The one split every direction the job has uses, if there is one.
    pub fn common(&self, shares: Shares) -> Option<&[(u64, f64)]> {
        let used: Vec<&Vec<(u64, f64)>> = [
            (shares.read_pct, &self.read),
            (shares.write_pct, &self.write),
            (shares.trim_pct, &self.trim),
        ]
        .into_iter()
        .filter(|(share, _)| *share > 0.0)
        .map(|(_, split)| split)
        .collect();
        let first = used.first()?;
        used.iter().all(|s| s == first).then_some(first.as_slice())
    }

    /// Each direction's sizes as lines of their own, weighted by the direction's share
    /// times the size's; `random` and `align` (spec text) on every line. Directions
    /// with no share and sizes with no weight give no line.
    pub fn lines(&self, shares: Shares, random: &str, align: Option<&str>) -> Vec<MixOut> {
        let directions: [Direction<'_>; 3] = [
            (shares.read_pct, &self.read, "100%", None),
            (shares.write_pct, &self.write, "0%", None),
            (shares.trim_pct, &self.trim, "0%", Some("trim")),
        ];
        let mut out = Vec::new();
        for (share, split, read, op) in directions {
            for &(bs, pct) in split.iter().filter(|_| share > 0.0) {
                if pct <= 0.0 {
                    continue;
                }
                out.push(MixOut {
                    block_size: format_bytes(bs),
                    weight: Some(format_pct(share * pct / 100.0)),
                    read: read.into(),
                    op,
                    random: random.into(),
                    align: align.map(str::to_string),
                    ..Default::default()
                });
            }
        }
        out
    }

    /// The smallest block size of the directions the job has.
    pub fn min_block(&self, shares: Shares) -> Option<u64> {
        [
            (shares.read_pct, &self.read),
            (shares.write_pct, &self.write),
            (shares.trim_pct, &self.trim),
        ]
        .into_iter()
        .filter(|(share, _)| *share > 0.0)
        .flat_map(|(_, s)| s.iter().map(|l| l.0))
        .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_read_as_fios_str_split_parse() {
        let one = Splits::parse("4k/100", 1024).unwrap();
        assert_eq!(one.read, one.trim);
        let two = Splits::parse("4k/100,64k/100", 1024).unwrap();
        assert_eq!(two.read, vec![(4096, 100.0)]);
        assert_eq!(two.write, vec![(65536, 100.0)]);
        assert_eq!(two.trim, two.write);
        let three = Splits::parse("4k/100,64k/100,1m/100", 1024).unwrap();
        assert_eq!(three.trim, vec![(1 << 20, 100.0)]);
        assert!(Splits::parse("4k/100,,1m/100", 1024).is_none());
        assert!(Splits::parse("4k,4k,4k,4k", 1024).is_none());
    }

    #[test]
    fn each_direction_keeps_its_sizes_and_the_weights_sum_to_100() {
        let s = Splits::parse("4k/50:8k/50,64k/100,1m/100", 1024).unwrap();
        // rw=randrw, rwmixread=70: no trims, so the trim split is unused.
        let shares = Shares::new(70.0, 0.0);
        assert!(s.common(shares).is_none());
        let lines = s.lines(shares, "100%", None);
        let got: Vec<(String, Option<String>, String, Option<&str>)> = lines
            .iter()
            .map(|l| (l.block_size.clone(), l.weight.clone(), l.read.clone(), l.op))
            .collect();
        assert_eq!(
            got,
            vec![
                ("4KiB".into(), Some("35%".into()), "100%".into(), None),
                ("8KiB".into(), Some("35%".into()), "100%".into(), None),
                ("64KiB".into(), Some("30%".into()), "0%".into(), None),
            ]
        );
        // trimwrite: half trims of 1 MiB, half writes of 64 KiB; reads unused.
        let shares = Shares::new(0.0, 50.0);
        let lines = s.lines(shares, "0%", None);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].op, Some("trim"));
        assert_eq!(lines[1].weight.as_deref(), Some("50%"));
        // A write-only job whose directions share one split.
        let w = Splits::parse("4k/100,64k/100", 1024).unwrap();
        assert_eq!(w.common(Shares::new(0.0, 0.0)), Some(&[(65536, 100.0)][..]));
        assert_eq!(w.min_block(Shares::new(0.0, 0.0)), Some(65536));
    }
}
