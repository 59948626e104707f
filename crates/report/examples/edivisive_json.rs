//! Change points of series given as JSON, for differential tests against Apache Otava
//! (`tests/history/otava_random.py`). Reads
//! `{"window": 50, "max_pvalue": 0.001, "min_magnitude": 0.05, "series": [[f64, ...], ...]}`
//! on stdin and prints `[[index, ...], ...]`: each series' change-point indices (the first
//! point after each change), as `iogate history detect` computes them.

use iogate_report::history::edivisive::{change_points, Options};
use std::io::Read;

#[derive(serde::Deserialize)]
struct Input {
    window: usize,
    max_pvalue: f64,
    min_magnitude: f64,
    series: Vec<Vec<f64>>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    let input: Input = serde_json::from_str(&text)?;
    let opts = Options {
        window: input.window,
        max_pvalue: input.max_pvalue,
        min_magnitude: input.min_magnitude,
    };
    let out: Vec<Vec<usize>> = input
        .series
        .iter()
        .map(|s| change_points(s, &opts).iter().map(|c| c.index).collect())
        .collect();
    println!("{}", serde_json::to_string(&out)?);
    Ok(())
}
