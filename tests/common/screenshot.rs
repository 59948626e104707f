//! Headless Chromium screenshots of the HTML pages and their pixel counts: one home for
//! the browser's flags and the PNG decoding that `tests/browser.rs` and
//! `tests/campaign.rs` check pages with. Child of `common`; the browser is found by
//! `common::chromium` (`Need::Chromium`).

use std::path::Path;
use std::process::Command;

/// Screenshots `html` at `width` × `height` into `shot` (replaced): panics with the
/// browser's stderr when no screenshot was written.
pub fn take(browser: &str, html: &Path, shot: &Path, (width, height): (u32, u32)) {
    let _ = std::fs::remove_file(shot);
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium runs");
    assert!(
        shot.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The screenshot's pixels as (r, g, b).
pub fn pixels(png_path: &Path) -> Vec<(i32, i32, i32)> {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).expect("screenshot"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .map(|px| (i32::from(px[0]), i32::from(px[1]), i32::from(px[2])))
        .collect()
}

/// Pixels of `png_path` within 12 of `rgb` in every channel.
pub fn count_colour(png_path: &Path, rgb: (i32, i32, i32)) -> u64 {
    pixels(png_path)
        .into_iter()
        .filter(|&(r, g, b)| {
            (r - rgb.0).abs() <= 12 && (g - rgb.1).abs() <= 12 && (b - rgb.2).abs() <= 12
        })
        .count() as u64
}
