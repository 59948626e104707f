//! `iogate schema spec|result|baseline|summary|inventory`: the published JSON Schemas (draft 2020-12), as
//! the spec, result and report crates generate them from their types.

use crate::cli::SchemaKind;
use crate::exit;

/// Prints a JSON Schema.
pub fn schema(kind: SchemaKind) -> u8 {
    let schema = match kind {
        SchemaKind::Spec => iogate_spec::document::spec_schema(),
        SchemaKind::Result => iogate_result::result_schema(),
        SchemaKind::Baseline => iogate_report::baseline_schema(),
        SchemaKind::Summary => iogate_result::fleet::summary_schema(),
        SchemaKind::Inventory => iogate_spec::inventory::inventory_schema(),
    };
    match serde_json::to_string_pretty(&schema) {
        Ok(s) => {
            outln!("{s}");
            exit::PASS
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}
