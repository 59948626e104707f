//! The exit codes of `iogate`, the contract with CI systems (DESIGN.md, "Exit codes").

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
