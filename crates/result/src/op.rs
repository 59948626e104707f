//! The direction of a request: [`Op`], read or write, and the other commands a mix line
//! may send ([`Command`]: trim, write zeroes, verify, write uncorrectable, flush). Every layer names them: trace
//! readers (`iogate-trace`), the engine, results and reports.

use serde::{Deserialize, Serialize};

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// A read.
    Read,
    /// A write.
    Write,
}

/// The other commands a mix line sends (defined with the plan, in `iogate-spec`).
pub use iogate_spec::Command;
