//! A step's result is a sum type in code (`StepDetail`) and the published flat shape in
//! result.json (`kind` and one optional block per kind): a real result reads and writes
//! back unchanged, and a block that contradicts its step's kind is refused when read.

use iogate_report::baseline::result_from_json;
use iogate_result::{StepDetail, StepResult};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("fixtures/fileserver-result.json");

/// Read, written, read and written again: the two writes are equal, and every key of
/// the (older) fixture's steps is still there.
#[test]
fn a_result_reads_and_writes_back_unchanged() {
    let original: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    let result = result_from_json(FIXTURE).expect("the fixture reads");
    assert!(matches!(result.steps[0].detail, StepDetail::Precondition));
    assert!(matches!(result.steps[1].detail, StepDetail::Workload(_)));
    let first = serde_json::to_string(&result).expect("writes");
    let again = result_from_json(&first).expect("reads what it wrote");
    let second = serde_json::to_string(&again).expect("writes again");
    assert_eq!(
        first, second,
        "a result changed on its way through StepResult"
    );
    let written: Value = serde_json::from_str(&first).expect("JSON");
    for (i, step) in original["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .enumerate()
    {
        for key in step.as_object().expect("a step is an object").keys() {
            assert!(
                written["steps"][i].get(key).is_some(),
                "steps[{i}].{key} lost on the way through StepResult"
            );
        }
    }
}

fn step_with(change: impl Fn(&mut Value)) -> Result<StepResult, String> {
    let original: Value = serde_json::from_str(FIXTURE).expect("fixture is JSON");
    let mut step = original["steps"][1].clone();
    change(&mut step);
    serde_json::from_value::<StepResult>(step).map_err(|e| e.to_string())
}

#[test]
fn a_block_of_another_kind_is_refused() {
    let purge = step_with(
        |s| s["purge"] = json!({"method": "discard", "snia_purge": false, "verified": {"block_size_bytes": 4096, "sampled": 2, "sampled_lbas": [0, 9], "surviving": 0, "surviving_lbas": []}}),
    );
    let e = purge.expect_err("a workload step with a purge block");
    assert!(e.contains("a workload step with a `purge` block"), "{e}");
    let sweep = step_with(|s| s["kind"] = json!("sweep"));
    let e = sweep.expect_err("a sweep step without its block");
    assert!(e.contains("a sweep step without its `sweep` block"), "{e}");
    let purge_ok = step_with(|s| {
        s["kind"] = json!("purge");
        s["purge"] = json!({"method": "discard", "snia_purge": false, "verified": {"block_size_bytes": 4096, "sampled": 2, "sampled_lbas": [0, 9], "surviving": 0, "surviving_lbas": []}});
    })
    .expect("a purge step with its block");
    assert_eq!(purge_ok.purge().map(|p| p.method.as_str()), Some("discard"));
    assert!(purge_ok.sweep().is_none());
}
