//! Text from data (spec names, build ids, metric paths from a history store or a result
//! file) made safe for a terminal: control characters (ESC, NUL, CSI, …) are printed as
//! escapes, so a poisoned name cannot move the cursor, recolour or clear the screen, and
//! bidirectional overrides are escaped so that it cannot reorder a line either.
//! Used wherever stored or ingested names reach a message (`history`, `diff`).

use std::borrow::Cow;

/// `text` with every control character but newline and tab, and every bidirectional
/// override or isolate (U+202A–U+202E, U+2066–U+2069), written as `\u{…}`.
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if is_unsafe(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Which characters may not reach a terminal is `cli_values::is_unsafe_char`'s one
/// rule (control characters and bidirectional overrides); a block of text keeps its
/// newlines and tabs.
fn is_unsafe(c: char) -> bool {
    iogate_spec::cli_values::is_unsafe_char(c) && c != '\n' && c != '\t'
}

/// A file name made from data (a spec name in the store): letters, digits, `.`, `_` and
/// `-` kept, anything else (`/`, `..`, control characters) replaced by `_`, and, when
/// anything was replaced, a hash of the original appended so two names never share a
/// file. Never empty, never starts with a dot.
pub fn file_name(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.starts_with('.') || out.is_empty() {
        out.insert(0, '_');
    }
    if out != name {
        // FNV-1a: stable across runs and platforms.
        let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        out.push_str(&format!("-{:08x}", h as u32));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_names_sanitized() {
        assert_eq!(safe("fio\u{1b}[2Jx\0"), "fio\\u{1b}[2Jx\\u{0}");
        assert_eq!(safe("a\tb\n"), "a\tb\n");
        assert_eq!(safe("ok\u{202e}kcab"), "ok\\u{202e}kcab");
        assert_eq!(safe("\u{2066}x"), "\\u{2066}x");
        assert_eq!(file_name("fileserver"), "fileserver");
        let poisoned = file_name("../../etc/passwd");
        assert!(
            !poisoned.contains('/') && !poisoned.starts_with('.'),
            "{poisoned}"
        );
        assert_ne!(file_name("a/b"), file_name("a_b"));
        assert_eq!(file_name(""), "_-84222325");
    }
}
