//! The exit codes of `iogate`, the contract with CI systems (README.md, "Commands"),
//! and their order; a run over several drives records each drive's in summary.json.

use iogate_result::Outcome;

/// Every assertion held and nothing regressed.
pub const PASS: u8 = 0;
/// An assertion failed or a baseline rule regressed.
pub const FAIL: u8 = 1;
/// The spec or the command line is wrong (diagnostics were printed).
pub const USAGE: u8 = 2;
/// The target or the engine failed (the result, if any, was written).
pub const TARGET: u8 = 3;
/// No verdict: a required baseline is missing.
pub const INCONCLUSIVE: u8 = 4;
/// Interrupted by SIGINT, after the partial result was written (SIGTERM: 143, SIGHUP:
/// 129; 128 + the signal, see `signals.rs`).
pub const INTERRUPTED: u8 = 130;

/// The exit code of a run's outcome.
pub fn of_outcome(o: Outcome) -> u8 {
    match o {
        Outcome::Pass => PASS,
        Outcome::Fail | Outcome::Regressed => FAIL,
        Outcome::Inconclusive => INCONCLUSIVE,
        Outcome::Error => TARGET,
    }
}

/// The worst of several exit codes (a run over several drives): signals (128 + n) over
/// target failures (3) over usage errors (2) over failures (1) over inconclusive (4)
/// over pass (0): as the outcomes rank (`Outcome: Ord`, tested below).
pub fn worst(codes: impl IntoIterator<Item = u8>) -> u8 {
    let rank = |c: u8| match c {
        PASS => 0,
        INCONCLUSIVE => 1,
        FAIL => 2,
        USAGE => 3,
        TARGET => 4,
        _ => 5,
    };
    codes.into_iter().max_by_key(|&c| rank(c)).unwrap_or(PASS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exit codes rank as the outcomes do: the worst code of several outcomes is the
    /// code of their worst outcome (`Outcome: Ord`), so a fleet's exit code and its
    /// summary's outcome agree.
    #[test]
    fn codes_rank_as_outcomes_do() {
        let all = [
            Outcome::Pass,
            Outcome::Fail,
            Outcome::Regressed,
            Outcome::Inconclusive,
            Outcome::Error,
        ];
        for a in all {
            for b in all {
                let worst = worst([of_outcome(a), of_outcome(b)]);
                assert_eq!(worst, of_outcome(a.max(b)), "{a:?} and {b:?}");
            }
        }
        assert!(Outcome::Pass < Outcome::Inconclusive);
        assert!(Outcome::Inconclusive < Outcome::Regressed);
        assert!(Outcome::Regressed < Outcome::Fail);
        assert!(Outcome::Fail < Outcome::Error);
    }
}
