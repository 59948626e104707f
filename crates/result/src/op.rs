//! The direction of a request: [`Op`], read or write. Every layer names it: trace
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
