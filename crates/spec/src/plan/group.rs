//! Where a step came from when a `loop:` produced it: [`LoopIteration`], one per
//! enclosing loop, outermost first. Child of `plan`; filled by `compile::group`, read by
//! the result's loop summaries (`result::groups`) and the report's loop tables.

use serde::{Deserialize, Serialize};

/// One enclosing loop's iteration of a step expanded from `loop:`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoopIteration {
    /// The loop's name (the prefix of its steps' names).
    pub name: String,
    /// Iteration, from 1.
    pub index: u32,
    /// The variable and its value in this iteration (`over:` loops; absent for `times:`).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<Binding>,
}

/// A loop variable's value in one iteration, as written in the spec (`5s`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Binding {
    /// Variable name.
    pub variable: String,
    /// Its value's text.
    pub value: String,
}
