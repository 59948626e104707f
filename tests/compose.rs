//! Specs a team can share (issue 41): `x-` anchors, `include:` fragments and `params:`
//! with `--set`, end to end through the binary. A composed spec plans exactly as the
//! spec written out by hand; `--set` changes exactly the parameter's fields; two
//! parameter sets are two baselines; composition mistakes are one located diagnostic
//! each, with the chain of includes; the shipped SNIA PTS specs, which share their
//! purge and preconditioning through `specs/fragments/`, plan exactly as written out,
//! and the published schema accepts them.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{code, iogate_in, result, Run, CHECK_JSONSCHEMA};
use serde_json::Value;

tests_main![
    a_composed_spec_plans_as_written_out_and_set_changes_only_its_parameter,
    two_parameter_sets_are_two_baselines,
    composition_mistakes_are_located_with_the_include_chain,
    pts_specs_on_fragments_plan_as_written_out: [CheckJsonschema],
];

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("dir");
    std::fs::write(p, text).expect("written");
}

fn plan_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["plan", "--json"];
    all.extend_from_slice(args);
    let o = iogate_in(dir, &all);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("plan JSON")
}

/// The JSON paths at which `a` and `b` differ.
fn differences(a: &Value, b: &Value, at: &str, out: &mut BTreeSet<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (p, q) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(p, q, &format!("{at}.{k}"), out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{at}[{i}]"), out);
            }
        }
        _ if a != b => {
            out.insert(at.to_string());
        }
        _ => {}
    }
}

const COMPOSED: &str = "iogate: 1
name: composed
params: { qd: 4 }
target: { size: 16MiB }
x-mix: &mix
  - { weight: 70%, block_size: 4KiB, read: 100%, random: 100% }
  - { weight: 30%, block_size: 64KiB, read: 0%, random: 0% }
steps:
  - include: frag/precondition.yaml
  - workload: { name: mixed, mix: *mix, queue_depth: \"${qd}\", ios: 3000 }
assert:
  - include: frag/assert.yaml
baseline:
  include: frag/baseline.yaml
";

const WRITTEN_OUT: &str = "iogate: 1
name: composed
target: { size: 16MiB }
steps:
  - precondition: { block_size: 128KiB, passes: 1, queue_depth: 4 }
  - workload:
      name: mixed
      queue_depth: 4
      ios: 3000
      mix:
        - { weight: 70%, block_size: 4KiB, read: 100%, random: 100% }
        - { weight: 30%, block_size: 64KiB, read: 0%, random: 0% }
assert:
  - mixed.errors == 0
  - mixed.ios == 3000
baseline:
  mixed.iops: -90%
";

fn composed_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    write(d, "composed.yaml", COMPOSED);
    write(d, "written.yaml", WRITTEN_OUT);
    write(
        d,
        "frag/precondition.yaml",
        "# the shared preconditioning\n- precondition: { block_size: 128KiB, passes: 1, queue_depth: \"${qd}\" }\n",
    );
    write(
        d,
        "frag/assert.yaml",
        "- mixed.errors == 0\n- include: more.yaml\n",
    );
    write(d, "frag/more.yaml", "- mixed.ios == 3000\n");
    write(d, "frag/baseline.yaml", "mixed.iops: -90%\n");
    dir
}

fn a_composed_spec_plans_as_written_out_and_set_changes_only_its_parameter() {
    let dir = composed_dir();
    let d = dir.path();
    let o = iogate_in(d, &["check", "composed.yaml"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let composed = plan_json(d, &["composed.yaml"]);
    let written = plan_json(d, &["written.yaml"]);
    assert_eq!(composed["spec_name"], "composed@qd=4");
    assert_eq!(composed["params"], serde_json::json!({ "qd": "4" }));
    let mut diff = BTreeSet::new();
    differences(&composed, &written, "", &mut diff);
    let expected: BTreeSet<String> = [".spec_name", ".spec_digest", ".params"]
        .map(String::from)
        .into();
    assert_eq!(diff, expected, "the composed plan is the written-out one");
    // `plan`'s table says where the included step came from.
    let o = iogate_in(d, &["plan", "composed.yaml"]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("from: frag/precondition.yaml"), "{table}");
    // `--set qd=32` changes the queue depth where `${qd}` is written, and the identity.
    let set = plan_json(d, &["composed.yaml", "--set", "qd=32"]);
    let mut diff = BTreeSet::new();
    differences(&composed, &set, "", &mut diff);
    let expected: BTreeSet<String> = [
        ".spec_name",
        ".spec_digest",
        ".params.qd",
        ".steps[0].queue_depth",
        ".steps[1].queue_depth",
    ]
    .map(String::from)
    .into();
    assert_eq!(diff, expected);
    assert_eq!(set["steps"][1]["queue_depth"], 32);
    // The run records the parameters and its identity.
    let o = Run::new("composed.yaml")
        .args(["--set", "qd=32"])
        .target("t.img")
        .out("out")
        .in_dir(d)
        .output();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = result(&d.join("out"));
    assert_eq!(r["params"], serde_json::json!({ "qd": "32" }));
    assert_eq!(r["spec_name"], "composed@qd=32");
    assert_eq!(r["spec_digest"], set["spec_digest"]);
    // Beside the spec's text, each fragment's, so the run can be reproduced.
    let fragments = r["spec_fragments"].as_object().expect("spec_fragments");
    let names: Vec<&str> = fragments.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "frag/assert.yaml",
            "frag/baseline.yaml",
            "frag/more.yaml",
            "frag/precondition.yaml"
        ]
    );
    assert_eq!(fragments["frag/more.yaml"], "- mixed.ios == 3000\n");
    let mixed = r["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "mixed"))
        .expect("step mixed");
    assert_eq!(mixed["queue_depth"], 32, "{mixed}");
}

fn two_parameter_sets_are_two_baselines() {
    let dir = composed_dir();
    let d = dir.path();
    // Exit 0, or 4 when compared with a baseline: one run measures no noise, so a
    // rule's verdict may be inconclusive; what matters here is which baseline it used.
    let run = |out: &str, set: &str, codes: &[i32]| {
        let o = Run::new("composed.yaml")
            .arg("--set")
            .arg(set)
            .target("t.img")
            .out(out)
            .baseline("golden")
            .args(["--key", "k"])
            .in_dir(d)
            .output();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(codes.contains(&code(&o)), "{stderr}");
        result(&d.join(out))
    };
    run("a", "qd=2", &[0]);
    let o = iogate_in(d, &["bless", "a", "--golden", "golden", "--key", "k"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(d.join("golden/composed@qd=2/k.json").is_file());
    // Another parameter set finds no baseline of its own: never compared with QD 2's.
    let other = run("b", "qd=8", &[0]);
    assert_eq!(
        other["baseline"]["path"],
        Value::Null,
        "{}",
        other["baseline"]
    );
    let outcomes = |r: &Value| -> Vec<String> {
        r["baseline"]["rules"]
            .as_array()
            .map(|v| {
                v.iter()
                    .map(|x| x["outcome"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(outcomes(&other), ["no_baseline"], "{}", other["baseline"]);
    // The same set again is compared with its own.
    let same = run("c", "qd=2", &[0, 4]);
    assert!(same["baseline"]["path"]
        .as_str()
        .is_some_and(|p| p.contains("composed@qd=2")));
    assert!(!outcomes(&same).is_empty() && outcomes(&same).iter().all(|o| o != "no_baseline"));
    // `diff` of the two sets says they ran different specs.
    let o = iogate_in(d, &["diff", "a", "b"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        text.contains("composed@qd=2") && text.contains("composed@qd=8"),
        "{text}"
    );
}

/// One diagnostic (exit 2); its rendering, with the chain of includes.
fn one_diagnostic(d: &Path, args: &[&str]) -> String {
    let o = iogate_in(d, args);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(code(&o), 2, "{err}");
    assert_eq!(err.matches("error: ").count(), 1, "{err}");
    err
}

fn composition_mistakes_are_located_with_the_include_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let spec = |inc: &str| {
        format!(
            "iogate: 1\nname: m\nparams:\n  size: 16MiB\ntarget: {{ size: \"${{size}}\" }}\nsteps:\n  - include: {inc}\n  - idle: {{ duration: 1s }}\n"
        )
    };
    write(d, "cycle.yaml", &spec("frag/a.yaml"));
    write(
        d,
        "frag/a.yaml",
        "- idle: { name: a, duration: 1s }\n- include: b.yaml\n",
    );
    write(d, "frag/b.yaml", "- include: a.yaml\n");
    write(d, "missing.yaml", &spec("frag/none.yaml"));
    write(d, "bad.yaml", &spec("frag/outer.yaml"));
    write(d, "frag/outer.yaml", "- include: inner.yaml\n");
    write(
        d,
        "frag/inner.yaml",
        "- idle: { name: rest, duration: 5 }\n",
    );
    write(d, "good.yaml", &spec("frag/inner_ok.yaml"));
    write(
        d,
        "frag/inner_ok.yaml",
        "- idle: { name: rest, duration: 5ms }\n",
    );
    write(
        d,
        "kw.yaml",
        "iogate: 1\nname: kw\nparams: { m: discard }\nsteps:\n  - purge: { method: \"${m}\" }\n",
    );
    write(
        d,
        "region.yaml",
        "iogate: 1\nname: r\nparams: { region: 100% }\ntarget: { size: 8MiB }\nsteps:\n  - workload: { duration: 1s, region: { length: \"${region}\" }, mix: [{ block_size: 4KiB, read: 100% }] }\n",
    );
    let mut all = String::new();
    for (what, args) in [
        ("cycle", vec!["check", "cycle.yaml"]),
        (
            "--set of a region out of range",
            vec!["check", "region.yaml", "--set", "region=0%"],
        ),
        (
            "--set of a keyword none of the choices",
            vec!["check", "kw.yaml", "--set", "m=erase"],
        ),
        ("missing fragment", vec!["check", "missing.yaml"]),
        ("fragment with an error", vec!["check", "bad.yaml"]),
        (
            "unknown --set",
            vec!["check", "good.yaml", "--set", "depth=8"],
        ),
        (
            "--set of the wrong unit",
            vec!["plan", "good.yaml", "--set", "size=16"],
        ),
        (
            "--set given twice",
            vec![
                "check",
                "good.yaml",
                "--set",
                "size=8MiB",
                "--set",
                "size=32MiB",
            ],
        ),
    ] {
        let err = one_diagnostic(d, &args);
        all.push_str(&format!("## {what}: iogate {}\n{err}\n", args.join(" ")));
    }
    assert!(
        all.contains("= included from frag/outer.yaml:1:12\n  = included from bad.yaml:7:14"),
        "{all}"
    );
    assert_eq!(code(&iogate_in(d, &["check", "good.yaml"])), 0);
    insta::assert_snapshot!("composition_mistakes", all);
}

fn pts_specs_on_fragments_plan_as_written_out() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let target = d.join("t.img");
    std::fs::File::create(&target)
        .and_then(|f| f.set_len(16 << 30))
        .expect("sparse target");
    let mut specs: Vec<_> = std::fs::read_dir(&root)
        .expect("specs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("snia-pts-"))
        })
        .collect();
    specs.sort();
    assert_eq!(specs.len(), 8, "{specs:?}");
    let t = target.to_str().expect("UTF-8");
    for spec in &specs {
        let text = std::fs::read_to_string(spec).expect("spec");
        assert!(
            text.contains("- include: fragments/pts-purge"),
            "{}",
            spec.display()
        );
        let out = common::written_out(spec);
        assert!(!out.contains("include:"), "{out}");
        let name = spec
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        write(d, &name, &out);
        let mut a = plan_json(d, &[spec.to_str().expect("UTF-8"), "--target", t]);
        let mut b = plan_json(d, &[&name, "--target", t]);
        a["spec_digest"] = Value::Null;
        b["spec_digest"] = Value::Null;
        assert!(
            a == b,
            "{name}: the plan on fragments differs from the written-out one"
        );
    }
    // The published schema accepts the specs as composed, and the spec of
    // `a_composed_spec_…` (an `x-` anchor, parameters, includes of steps, assertions and
    // baseline rules).
    write(d, "composed.yaml", COMPOSED);
    specs.push(d.join("composed.yaml"));
    let o = Command::new(CHECK_JSONSCHEMA)
        .args([
            "--schemafile",
            &root
                .join("../schema/spec.schema.json")
                .display()
                .to_string(),
        ])
        .args(&specs)
        .output()
        .expect("check-jsonschema runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}
