//! The published JSON Schemas (`schema/*.json`) against a real validator,
//! check-jsonschema from PyPI: they are what `iogate schema` generates from the Rust
//! types; every shipped spec names the spec schema and validates; the bad specs that are
//! wrong in structure (not only in meaning) are rejected by the validator as by iogate;
//! a real run's result.json and the golden baseline validate; the CI recipes validate
//! against GitHub's and GitLab's own schemas (check-jsonschema ships both).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{code, iogate, write_spec, Run, CHECK_JSONSCHEMA};

tests_main![
    published_schemas_are_the_generated_ones,
    every_shipped_spec_names_and_meets_the_spec_schema: [CheckJsonschema],
    structurally_bad_specs_are_rejected_by_the_schema_and_by_iogate: [CheckJsonschema],
    a_real_result_and_the_golden_baseline_meet_their_schemas: [CheckJsonschema],
    ci_recipes_meet_github_and_gitlab_schemas: [CheckJsonschema],
    the_kubernetes_recipe_meets_the_kubernetes_schemas: [KubernetesValidate],
    the_lab_inventory_is_a_valid_inventory,
    inventory_checks_and_the_schema_agree: [CheckJsonschema],
    a_run_over_several_targets_meets_the_summary_schema: [CheckJsonschema],
    check_and_the_schema_agree_on_scalar_types: [CheckJsonschema],
    extension_keys_are_accepted_and_other_unknown_keys_refused_by_both: [CheckJsonschema],
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check(schema: &[&str], files: &[PathBuf]) -> Output {
    Command::new(CHECK_JSONSCHEMA)
        .args(schema)
        .args(files)
        .output()
        .expect("check-jsonschema runs")
}

/// The files of `files` the schema `schema` (a `--schemafile` path) rejects, by their
/// paths as given: one check-jsonschema run for all of them (each run starts Python,
/// seconds on a loaded machine), its JSON report read for every file it failed to
/// validate or to parse.
fn rejected_by_schema(schema: &str, files: &[PathBuf]) -> std::collections::BTreeSet<String> {
    let o = check(&["--schemafile", schema, "--output-format", "json"], files);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "check-jsonschema's JSON report: {e}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let rejected: std::collections::BTreeSet<String> = ["errors", "parse_errors"]
        .iter()
        .flat_map(|k| report[k].as_array().cloned().unwrap_or_default())
        .map(|e| e["filename"].as_str().expect("a filename").to_string())
        .collect();
    // The exit code says the same as the report.
    assert_eq!(o.status.success(), rejected.is_empty(), "{report}");
    rejected
}

fn schema_file(name: &str) -> String {
    root()
        .join("schema")
        .join(format!("{name}.schema.json"))
        .display()
        .to_string()
}

fn published_schemas_are_the_generated_ones() {
    for kind in ["spec", "result", "baseline", "summary", "inventory"] {
        let o = iogate(&["schema", kind]);
        assert_eq!(code(&o), 0);
        let generated: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let published: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(schema_file(kind)).unwrap()).unwrap();
        assert_eq!(
            generated, published,
            "schema/{kind}.schema.json is stale: regenerate it with `iogate schema {kind} > schema/{kind}.schema.json`"
        );
        assert_eq!(
            published["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{kind}"
        );
    }
}

fn shipped_specs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("specs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.sort();
    v
}

fn every_shipped_spec_names_and_meets_the_spec_schema() {
    let specs = shipped_specs();
    assert!(specs.len() >= 7);
    for s in &specs {
        let first = std::fs::read_to_string(s).unwrap();
        assert_eq!(
            first.lines().next(),
            Some("# yaml-language-server: $schema=../schema/spec.schema.json"),
            "{}: the first line names the schema for editors",
            s.display()
        );
    }
    let o = check(&["--schemafile", &schema_file("spec")], &specs);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// Bad specs wrong in structure: unknown keys and step kinds, a wrong version, values
/// without their unit, out-of-range counts and percentages, YAML errors. (The others are
/// wrong in meaning: weights that do not sum to 100, unknown metrics, a region beyond the
/// target; only iogate's compiler sees those.)
const SCHEMA_INVALID: [&str; 36] = [
    "bad_admin.yaml",
    "bad_baseline_required.yaml",
    "bad_data.yaml",
    "bad_during.yaml",
    "bad_engine_modes.yaml",
    "bad_health_interval_word.yaml",
    "bad_idle_cap.yaml",
    "bad_loop.yaml",
    "bad_pacing.yaml",
    "bad_peers_direction.yaml",
    "bad_peers_huge.yaml",
    "bad_placement.yaml",
    "bad_pre_writes.yaml",
    "bad_pre_writes_empty.yaml",
    "bad_pre_writes_fields.yaml",
    "bad_precondition.yaml",
    "bad_protection_information.yaml",
    "bad_replay.yaml",
    "bad_sweep.yaml",
    "bad_sweep_mix.yaml",
    "bad_tolerance.yaml",
    "bad_unit.yaml",
    "bad_zone_check.yaml",
    "bad_zones.yaml",
    "duplicate_key.yaml",
    "many_errors.yaml",
    "non_finite_number.yaml",
    "null_value.yaml",
    "number_past_64_bits.yaml",
    "two_documents.yaml",
    "unknown_key.yaml",
    "unknown_step_kind.yaml",
    "value_with_spaces.yaml",
    "wrong_version.yaml",
    "yaml_syntax.yaml",
    "zero_queue_depth.yaml",
];

fn structurally_bad_specs_are_rejected_by_the_schema_and_by_iogate() {
    let dir = root().join("tests/bad_specs");
    let mut rejected = Vec::new();
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    all.sort();
    let by_schema = rejected_by_schema(&schema_file("spec"), &all);
    for f in &all {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if by_schema.contains(f.to_str().unwrap()) {
            rejected.push(name.clone());
        }
        // iogate rejects every bad spec, whatever the schema says (some only against a
        // target: `plan` resolves them against the scratch file).
        let c = iogate(&["plan", f.to_str().unwrap()]);
        assert_eq!(code(&c), 2, "{name}");
    }
    assert_eq!(rejected, SCHEMA_INVALID, "bad specs the schema rejects");
}

fn a_real_result_and_the_golden_baseline_meet_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    // A step of each kind that fills a different part of result.json.
    let spec = write_spec(
        dir.path(),
        "schema",
        "iogate: 1\nname: schema\ntarget: { size: 32MiB }\nsteps:\n  - precondition: { passes: 1 }\n  - workload:\n      name: w\n      ios: 2000\n      queue_depth: 4\n      verify: true\n      data: { buffer_compress_percentage: 50 }\n      mix: [ { block_size: 4KiB, read: 50%, random: 100% } ]\n  - repeat: { name: r, requests: 16, rounds: 2 }\n  - sweep:\n      name: s\n      duration: 100ms\n      matrix: { block_size: [4KiB], read: [100%], queue_depth: [1, 2] }\n  - sweep:\n      name: m\n      duration: 100ms\n      matrix: { mix: [ { name: hot, lines: [ { block_size: 4KiB, weight: 70%, read: 40%, random: 100% }, { block_size: 8KiB, weight: 30%, random: 100% } ] }, { name: cold, lines: [ { block_size: 64KiB, read: 100%, random: 0% } ] } ], queue_depth: [1, 2] }\n      distribution: { zones: [ { requests: 80%, region: 20% }, { requests: 20%, region: 80% } ] }\n      operating_points: { ceiling: 1s, mid_points: 1 }\nassert:\n  - w.iops > 1\n  - m.iops[mix=hot, queue_depth=2] > 1\n  - m.bandwidth[mix=cold, queue_depth=1] > 1MiB/s\n",
    );
    let out = dir.path().join("out");
    common::run_scratch_ok(&spec, &out);
    // A `[mix=NAME]` selector reads that mix's case, not the other's at the same depth.
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let cases = r["steps"][4]["sweep"]["cases"].as_array().unwrap();
    let window = |mix: &str, qd: u64| {
        let c = cases
            .iter()
            .find(|c| c["mix"] == mix && c["queue_depth"] == qd);
        c.unwrap()["window"].clone()
    };
    let judged = |prefix: &str| {
        let a = r["assertions"].as_array().unwrap();
        a.iter()
            .find(|x| x["expr"].as_str().unwrap().starts_with(prefix))
            .unwrap()["value"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(
        judged("m.iops[mix=hot"),
        window("hot", 2)["iops"].as_f64().unwrap()
    );
    assert_eq!(
        judged("m.bandwidth[mix=cold"),
        window("cold", 1)["bandwidth_bytes_per_s"].as_f64().unwrap()
    );
    let o = check(
        &["--schemafile", &schema_file("result")],
        &[out.join("result.json")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let golden: Vec<PathBuf> = std::fs::read_dir(root().join("golden/fileserver"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(!golden.is_empty());
    let o = check(&["--schemafile", &schema_file("baseline")], &golden);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // A planted mistake is caught: the schema is not a check that cannot fail.
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    r["steps"][1]["metrics"]["iops"] = "fast".into();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r.to_string()).unwrap();
    let o = check(&["--schemafile", &schema_file("result")], &[bad]);
    assert!(!o.status.success(), "a string IOPS must not validate");
}

/// Two file targets (no root needed): summary.json validates, and so does each drive's
/// result.json; a planted mistake does not.
fn a_run_over_several_targets_meets_the_summary_schema() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write_spec(
        dir.path(),
        "pair",
        "iogate: 1\nname: pair\ntarget: { size: 8MiB }\nsteps:\n  - workload:\n      name: w\n      ios: 2000\n      queue_depth: 4\n      mix: [ { block_size: 4KiB, read: 50%, random: 100% } ]\n",
    );
    let out = dir.path().join("out");
    let (a, b) = (dir.path().join("a.img"), dir.path().join("b.img"));
    let path = |p: &Path| p.display().to_string();
    let o = Run::new(path(&spec))
        .target(path(&a))
        .target(path(&b))
        .out(path(&out))
        .quiet()
        .output();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let o = check(
        &["--schemafile", &schema_file("summary")],
        &[out.join("summary.json")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let results = [out.join("a.img/result.json"), out.join("b.img/result.json")];
    let o = check(&["--schemafile", &schema_file("result")], &results);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let mut s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["drives"].as_array().map(Vec::len), Some(2));
    s["drives"][0]["exit_code"] = "zero".into();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, s.to_string()).unwrap();
    let o = check(&["--schemafile", &schema_file("summary")], &[bad]);
    assert!(!o.status.success(), "a string exit code must not validate");
}

/// `ci/kubernetes/` validates strictly against the Kubernetes API's schemas, and a
/// planted unknown field (`completionModee`) in a copy does not.
fn the_kubernetes_recipe_meets_the_kubernetes_schemas() {
    let recipe = root().join("ci/kubernetes/iogate-campaign.yaml");
    let validate = |f: &Path| {
        Command::new(common::KUBERNETES_VALIDATE)
            .arg("--strict")
            .arg(f)
            .output()
            .expect("kubernetes-validate runs")
    };
    let o = validate(&recipe);
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let text = std::fs::read_to_string(&recipe).unwrap();
    std::fs::write(
        &bad,
        text.replace("completionMode: Indexed", "completionModee: Indexed"),
    )
    .unwrap();
    assert!(
        !validate(&bad).status.success(),
        "an unknown field must not validate"
    );
}

/// The CI fleet recipes' inventory is one `campaign` reads.
fn the_lab_inventory_is_a_valid_inventory() {
    let inv = root().join("ci/lab-inventory.yaml");
    let o = iogate(&[
        "campaign",
        "targets",
        "--inventory",
        inv.to_str().unwrap(),
        "--host",
        "lab-host-1",
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
}

fn ci_recipes_meet_github_and_gitlab_schemas() {
    let github = root().join("ci/github-actions.yml");
    let gitlab = root().join("ci/gitlab-ci.yml");
    // The fleet forms: a job per host (matrix), then `history detect`.
    let github_fleet = root().join("ci/github-actions-fleet.yml");
    let gitlab_fleet = root().join("ci/gitlab-ci-fleet.yml");
    let o = check(
        &["--builtin-schema", "vendor.github-workflows"],
        &[github, github_fleet],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let o = check(
        &["--builtin-schema", "vendor.gitlab-ci"],
        &[gitlab.clone(), gitlab_fleet.clone()],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    // The fleet recipe is checked too.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad-fleet.yml");
    let text = std::fs::read_to_string(&gitlab_fleet).unwrap();
    std::fs::write(
        &bad,
        text.replace("timeout: 3h", "timeout: 3h\n  when: sometimes"),
    )
    .unwrap();
    let o = check(&["--builtin-schema", "vendor.gitlab-ci"], &[bad]);
    assert!(!o.status.success(), "an invalid `when` must not validate");
    // A planted mistake (an unknown `when`) is caught.
    let bad = dir.path().join("bad.yml");
    let text = std::fs::read_to_string(&gitlab).unwrap();
    std::fs::write(
        &bad,
        text.replace("timeout: 2h", "timeout: 2h\n  when: sometimes"),
    )
    .unwrap();
    let o = check(&["--builtin-schema", "vendor.gitlab-ci"], &[bad]);
    assert!(!o.status.success(), "an invalid `when` must not validate");
}

/// Top-level `x-` keys are extension keys: both `iogate check` and the schema accept
/// them (anchors defined there and used in steps plan as if written out), and both
/// refuse any other unknown top-level key, `check` naming each with its position.
fn extension_keys_are_accepted_and_other_unknown_keys_refused_by_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    let with = "iogate: 1\nname: s\nx-mix: &fs\n  - { block_size: 4KiB, weight: 60%, read: 80% }\n  - { block_size: 64KiB, weight: 40%, read: 80% }\nx-qd: &qd 8\ntarget: { size: 16MiB }\nsteps:\n  - workload: { name: w, ios: 10, queue_depth: *qd, mix: *fs }\n";
    let plain = "iogate: 1\nname: s\ntarget: { size: 16MiB }\nsteps:\n  - workload: { name: w, ios: 10, queue_depth: 8, mix: [{ block_size: 4KiB, weight: 60%, read: 80% }, { block_size: 64KiB, weight: 40%, read: 80% }] }\n";
    let schema = schema_file("spec");
    let a = write_spec(dir.path(), "with", with);
    let b = write_spec(dir.path(), "plain", plain);
    assert_eq!(code(&iogate(&["check", a.to_str().unwrap()])), 0);
    let v = check(&["--schemafile", &schema], std::slice::from_ref(&a));
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    // The same plan but for the digest of the text.
    let plan = |p: &Path| {
        let o = iogate(&["plan", p.to_str().unwrap(), "--json"]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("plan json");
        v["spec_digest"] = serde_json::Value::Null;
        v
    };
    assert!(
        plan(&a) == plan(&b),
        "the anchors plan as the spec written out"
    );
    let bad = write_spec(
        dir.path(),
        "bad",
        &with.replace("x-qd:", "qd:").replace("x-mix", "y-mix"),
    );
    let o = iogate(&["check", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 2, "{err}");
    for (key, line) in [("y-mix", 3), ("qd", 6)] {
        assert!(
            err.contains(&format!("bad.yaml:{line}:1: invalid spec structure")),
            "{err}"
        );
        assert!(err.contains(&format!("unknown field `{key}`")), "{err}");
    }
    assert!(err.contains("an extension key starting with `x-`"), "{err}");
    let v = check(&["--schemafile", &schema], std::slice::from_ref(&bad));
    assert!(!v.status.success(), "the schema refuses them too");
}

/// `iogate check` and the published spec schema agree on every value whose type YAML
/// readers are lenient about: quoted numbers and booleans (refused by both), whole
/// numbers written with a fraction (accepted by both: JSON Schema's `integer` is a
/// mathematical integer), fractions where a whole number is expected, YAML 1.1 hex.
fn check_and_the_schema_agree_on_scalar_types() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = |version: &str, line: &str| {
        format!("iogate: {version}\nname: s\ntarget: {{ size: 16MiB }}\nsteps:\n  - workload:\n      name: w\n      ios: 10\n      {line}\n      mix: [ {{ block_size: 4KiB, read: 100%, random: 0% }} ]\n")
    };
    // (version, workload line, accepted by both)
    let table = [
        ("1", "jobs: 2", true),
        ("1", "jobs: \"2\"", false),
        ("1", "queue_depth: '4'", false),
        ("1", "verify: \"true\"", false),
        ("1", "verify: true", true),
        ("1", "jobs: 2.0", true),
        ("1", "jobs: 2.5", false),
        ("1", "jobs: 0x2", true),
        ("1", "rate: { iops: \"5\" }", false),
        ("1", "rate: { iops: 5.5 }", true),
        ("1.0", "jobs: 1", true),
        ("\"1\"", "jobs: 1", false),
        ("2", "jobs: 1", false),
        // Zero needs no unit (the schema refused `offset: 0`, which iogate accepts).
        ("1", "region: { offset: 0, length: 1MiB }", true),
        ("1", "region: { offset: \"0\", length: 50% }", true),
        ("1", "region: { offset: 4096, length: 1MiB }", false),
        ("1", "region: { offset: 1, length: 1MiB }", false),
    ];
    let paths: Vec<PathBuf> = table
        .iter()
        .enumerate()
        .map(|(i, (version, line, _))| {
            write_spec(dir.path(), &format!("s{i}"), &spec(version, line))
        })
        .collect();
    let rejected = rejected_by_schema(&schema_file("spec"), &paths);
    for ((version, line, accepted), path) in table.iter().zip(&paths) {
        let by_check = code(&iogate(&["check", path.to_str().unwrap()])) == 0;
        let by_schema = !rejected.contains(path.to_str().unwrap());
        assert_eq!(
            (by_check, by_schema),
            (*accepted, *accepted),
            "iogate: {version} / {line}: check {by_check}, schema {by_schema}"
        );
    }
}

/// `campaign` and the published inventory schema agree on an inventory's bounds and
/// scalar types: a quoted count and a deviation of 0 are refused by both (before, the
/// count was read as a number and the schema's minimum took 0), the bounds themselves
/// accepted by both.
fn inventory_checks_and_the_schema_agree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let table = [
        ("count: 3", "", true),
        ("count: \"3\"", "", false),
        ("count: 4096", "", true),
        ("count: 4097", "", false),
        ("count: 2", "peers: { max_deviation_pct: 0 }\n", false),
        ("count: 2", "peers: { max_deviation_pct: 0.5 }\n", true),
        ("count: 2", "peers: { max_deviation_pct: 1000 }\n", true),
        ("count: 2", "peers: { max_deviation_pct: \"5\" }\n", false),
    ];
    let paths: Vec<PathBuf> = table
        .iter()
        .enumerate()
        .map(|(i, (count, peers, _))| {
            let p = dir.path().join(format!("inv{i}.yaml"));
            let text = format!(
                "inventory: a\n{peers}drives:\n  - {{ host: h, model: M, {count}, specs: [s] }}\n"
            );
            std::fs::write(&p, text).expect("inventory");
            p
        })
        .collect();
    let rejected = rejected_by_schema(&schema_file("inventory"), &paths);
    for ((count, peers, accepted), path) in table.iter().zip(&paths) {
        let o = iogate(&[
            "campaign",
            "targets",
            "--inventory",
            path.to_str().unwrap(),
            "--host",
            "h",
        ]);
        let by_iogate = code(&o) == 0;
        let by_schema = !rejected.contains(path.to_str().unwrap());
        assert_eq!(
            (by_iogate, by_schema),
            (*accepted, *accepted),
            "{peers}{count}: iogate {by_iogate}, schema {by_schema}"
        );
    }
}
