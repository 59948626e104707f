//! The HTML pages in a real browser: headless Chromium renders `report.html` of a run and
//! `diff.html` of two runs and takes screenshots, which must not be blank: they must hold
//! dark text, the verdict badge's green, and the charts' blue bars or lines.

mod common;

use std::path::Path;

/// Counts pixels of the screenshot that are near-black, badge green (pass) or orange
/// (inconclusive), chart blue and overlay red.
fn census(png_path: &Path) -> (u64, u64, u64, u64, u64) {
    let (mut dark, mut green, mut blue, mut red, mut total) = (0, 0, 0, 0, 0);
    for (r, g, b) in common::screenshot::pixels(png_path) {
        total += 1;
        if r < 80 && g < 80 && b < 80 {
            dark += 1;
        }
        // The pass badge: #2e7d32.
        // Badges: pass #2e7d32, inconclusive #ef6c00.
        let pass = (r - 46).abs() < 20 && (g - 125).abs() < 20 && (b - 50).abs() < 20;
        let inconclusive = (r - 239).abs() < 20 && (g - 108).abs() < 20 && b < 20;
        if pass || inconclusive {
            green += 1;
        }
        // Chart bars: RGB(52, 101, 164).
        if (r - 52).abs() < 20 && (g - 101).abs() < 20 && (b - 164).abs() < 20 {
            blue += 1;
        }
        // The second series of an overlay chart: RGB(204, 0, 0).
        if (r - 204).abs() < 20 && g < 20 && b < 20 {
            red += 1;
        }
    }
    (dark, green, blue, red, total)
}

fn html_report_renders_in_headless_chromium() {
    let browser = common::chromium().expect("headless Chromium (Need::Chromium)");
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = common::write_spec(
        dir.path(),
        "browser",
        "iogate: 1\nname: browser\ntarget: { size: 32MiB }\nsteps:\n  - workload:\n      name: rr\n      queue_depth: 4\n      duration: 3s\n      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]\nassert:\n  - rr.errors == 0\n",
    );
    let out = dir.path().join("out");
    common::run_ok(&spec, &dir.path().join("t.img"), &out);
    let (dark, green, blue, _, total) =
        screenshot(browser, &out.join("report.html"), dir.path(), 2400);
    eprintln!("report: {total} pixels, {dark} dark, {green} badge green, {blue} chart blue");
    assert!(total >= 1280 * 2400, "screenshot of {total} pixels");
    assert!(dark > 2_000, "no text rendered ({dark} dark pixels)");
    assert!(green > 500, "no verdict badge ({green} green pixels)");
    assert!(blue > 2_000, "no chart bars ({blue} blue pixels)");

    // The diff page of two runs: text, the badge, and A's blue overlay lines.
    let again = dir.path().join("again");
    common::run_ok(&spec, &dir.path().join("t.img"), &again);
    let diff = dir.path().join("diff");
    let o = common::iogate(&[
        "diff",
        out.to_str().expect("UTF-8"),
        again.to_str().expect("UTF-8"),
        "--tolerance",
        "50",
        "--out",
        diff.to_str().expect("UTF-8"),
    ]);
    assert_eq!(
        common::code(&o),
        0,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // The table of moved metrics comes before the charts and its length varies with the
    // noise of the two runs: a taller page keeps the charts in the screenshot.
    let (dark, green, blue, red, _) =
        screenshot(browser, &diff.join("diff.html"), dir.path(), 6000);
    eprintln!("diff: {dark} dark, {green} badge green or orange, {blue} line blue, {red} line red");
    assert!(dark > 2_000, "no text rendered ({dark} dark pixels)");
    // Two runs of one spec: no regression, but short runs may leave metrics inconclusive.
    assert!(
        green > 500,
        "no verdict badge ({green} green or orange pixels)"
    );
    // A's lines are blue, B's red and drawn over them: where two runs of one spec agree,
    // B hides A (one clean CI run saw 185 blue pixels, the legends' samples and little
    // else), so the lines are counted together and A's colour must still show.
    assert!(
        blue + red > 1_000,
        "no overlay lines ({blue} blue, {red} red pixels)"
    );
    assert!(blue > 100, "no run A in the overlays ({blue} blue pixels)");
}

/// The assertions' pass and fail marks are drawn by the page (CSS), not emoji that a
/// browser without an emoji font shows as empty boxes: the report of a run with one
/// passing and one failing assertion holds no emoji mark, and its screenshot shows both
/// marks' colours (a 16 × 16 square each, less its white stroke).
fn marks_are_drawn_not_emoji() {
    let browser = common::chromium().expect("headless Chromium (Need::Chromium)");
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = common::write_spec(
        dir.path(),
        "marks",
        "iogate: 1\nname: marks\ntarget: { size: 16MiB }\nsteps:\n  - workload:\n      name: rr\n      duration: 1s\n      mix: [ { block_size: 4KiB, read: 100%, random: 100% } ]\nassert:\n  - rr.errors == 0\n  - rr.iops < 1\n",
    );
    let out = dir.path().join("out");
    let o = common::Run::new(&spec)
        .target(dir.path().join("t.img"))
        .out(&out)
        .quiet()
        .output();
    assert_eq!(common::code(&o), 1, "one assertion fails: {o:?}");
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    for emoji in ["✅", "❌", "⚠️", "➖"] {
        assert!(
            !html.contains(emoji),
            "the HTML report holds the emoji {emoji}"
        );
    }
    screenshot(browser, &out.join("report.html"), dir.path(), 1600);
    let shot = dir.path().join("shot.png");
    let pass = common::screenshot::count_colour(&shot, (67, 160, 71));
    let fail = common::screenshot::count_colour(&shot, (229, 57, 53));
    eprintln!("marks: {pass} pass-green pixels, {fail} fail-red pixels");
    assert!(pass >= 80, "no pass mark drawn ({pass} pixels)");
    assert!(fail >= 80, "no fail mark drawn ({fail} pixels)");
}

/// Screenshots `html` at 1280 × `height` and counts its pixels ([`census`]).
fn screenshot(browser: &str, html: &Path, dir: &Path, height: u32) -> (u64, u64, u64, u64, u64) {
    let shot = dir.join("shot.png");
    common::screenshot::take(browser, html, &shot, (1280, height));
    census(&shot)
}

tests_main![
    html_report_renders_in_headless_chromium: [Chromium],
    marks_are_drawn_not_emoji: [Chromium],
];
