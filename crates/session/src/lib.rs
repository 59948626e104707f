//! iogate-session: one run of a spec, conducted from its configuration to its committed
//! result directory. The phases, in order: **prepare** (`prepare`: the run's own files,
//! the spec compiled for the target's geometry, the destructive-write guard, replay
//! traces, the verification state) → **ready** (`conclude::ready`: identity, build,
//! history store, a writable result directory, the baseline) → **execute** (`run`: one
//! drive, or `fleet`: every drive at once, each on its own thread; the journal and the
//! request log stream as the run goes) → **conclude** (`conclude`: verdicts, baseline,
//! history, the outcome) → **commit** (`layout`: the result directory written and put in
//! place at once). One rule each lives here: the result-directory layout (`layout`), the
//! exit codes and their order (`exit`, as `Outcome: Ord`), the baseline choice
//! (`iogate_report::baseline_choice`, called from one place), when a verification state
//! and a journal are needed (`prepare`), and which files a run may write (`own_files`).
//! `compile` is `iogate check` and `plan`; `powercut` is `iogate verify`; `history` the history store's commands. Neighbours: the runner (engine, targets, journal) and
//! the report crate (verdicts, baselines, history, renderers) below; the binary above
//! keeps clap, printing (through [`Console`]) and the process's exit. What a run is
//! given and where it reports is `config`; a command's failure and exit code `failure`.

pub mod analyze;
pub mod campaign;
pub mod compile;
mod conclude;
pub mod config;
mod execute;
pub mod exit;
pub mod failure;
pub mod fleet;
pub mod history;
pub mod layout;
mod own_files;
pub mod powercut;
mod prepare;
pub mod run;
pub mod signals;
mod staging;
pub mod start;
pub mod terminal;

pub use config::{Console, Consoles, RunConfig};
pub use failure::{probe, read_spec, Failure};
pub use layout::bless;
pub use run::run;
