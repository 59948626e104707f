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

/// The prefix one loop iteration gives the names of the steps it expands, `<loop>_<i>_`
/// (`hir_2_`): the one spelling of it, which step names, loop figures
/// ([`loop_figure_name`], `LoopFigure::path_name` in the result crate) and
/// [`inner_name`] share.
pub fn iteration_prefix(loop_name: &str, index: u32) -> String {
    format!("{loop_name}_{index}_")
}

/// A step's name with its loops' `<loop>_<i>_` prefixes removed (`burst` for
/// `hir_2_cycle_7_burst`): its name inside the loops.
pub fn inner_name<'a>(name: &'a str, loops: &[LoopIteration]) -> &'a str {
    let mut name = name;
    for it in loops {
        let prefix = iteration_prefix(&it.name, it.index);
        name = name.strip_prefix(prefix.as_str()).unwrap_or(name);
    }
    name
}

/// The name of the loop figure a step's runs add to, `<loop>_<i>_<step>` (`hir_2_burst`:
/// every `burst` of the outermost loop `hir`'s 2nd iteration, whatever inner loops
/// repeat it), a metric path's step segment (`hir_2_burst.iops`). Only for steps inside
/// two or more loops: inside one loop, the figure is the step itself and has its name.
pub fn loop_figure_name(name: &str, loops: &[LoopIteration]) -> Option<String> {
    let [outer, _, ..] = loops else {
        return None;
    };
    Some(iteration_prefix(&outer.name, outer.index) + inner_name(name, loops))
}
