//! A Rust source scanner for `tests/architecture.rs`: code without comments, strings and
//! character literals, lexed as the compiler does (so braces, quotes and paths in them do
//! not count), test modules left out; the module a file defines; the modules it refers to (`crate::a::b`, `super::x`,
//! `self::x`); and the line span of every function body (brace counting).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `src` without comments, string and character literals (each replaced by spaces, so
/// line numbers stay), cut before the first `#[cfg(test)]` (test modules are last).
/// Tokens as the Rust reference's lexical chapter defines them: line and (nested) block
/// comments; string, byte string and C string literals with escapes; raw forms with any
/// number of `#`; character and byte literals (`'"'`, `b'"'`, `'\''`, `'\u{7f}'`);
/// lifetimes and labels (`'a`) are code. A literal's prefix (`b`, `c`, `r`, `br`, `cr`)
/// counts only at the start of a word, so `r#type` and `attr"` are code.
pub fn code(src: &str) -> String {
    let text = code_with_tests(src);
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// `src` without comments, string and character literals, as [`code`] reads it, but
/// whole: test modules kept (for the limits test code is held to as well).
pub fn code_with_tests(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let after_word = i > 0 && is_word_byte(b[i - 1]);
        match token_len(&b[i..], after_word) {
            Some(n) => {
                let n = n.max(1).min(b.len() - i);
                out.extend(
                    b[i..i + n]
                        .iter()
                        .map(|&c| if c == b'\n' { c } else { b' ' }),
                );
                i += n;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A byte of an identifier (non-ASCII bytes count: identifiers may be Unicode).
fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

/// The length of the comment or literal at the start of `b`, if one starts there.
fn token_len(b: &[u8], after_word: bool) -> Option<usize> {
    match b {
        [b'/', b'/', ..] => Some(b.iter().position(|&c| c == b'\n').unwrap_or(b.len())),
        [b'/', b'*', ..] => Some(block_comment_len(b)),
        [b'"', ..] => Some(quoted_len(b, b'"')),
        [b'\'', ..] => char_literal_len(b),
        _ if after_word => None,
        [b'b', b'\'', ..] => char_literal_len(&b[1..]).map(|n| n + 1),
        [b'b' | b'c', b'"', ..] => Some(1 + quoted_len(&b[1..], b'"')),
        [b'b' | b'c', b'r', ..] => raw_len(&b[2..]).map(|n| n + 2),
        [b'r', ..] => raw_len(&b[1..]).map(|n| n + 1),
        _ => None,
    }
}

/// A block comment's length, nested ones included (unterminated: the rest).
fn block_comment_len(b: &[u8]) -> usize {
    let (mut depth, mut j) = (0usize, 0usize);
    while j < b.len() {
        if b[j..].starts_with(b"/*") {
            depth += 1;
            j += 2;
        } else if b[j..].starts_with(b"*/") {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    b.len()
}

/// A quoted literal's length from its opening `quote` at `b[0]`, escapes skipped.
fn quoted_len(b: &[u8], quote: u8) -> usize {
    let mut j = 1;
    while j < b.len() && b[j] != quote {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    (j + 1).min(b.len())
}

/// A character literal's length from its `'` at `b[0]`; `None` for a lifetime or label.
fn char_literal_len(b: &[u8]) -> Option<usize> {
    if b.get(1) == Some(&b'\\') {
        // The escaped character is skipped, then the closing quote.
        let close = b.get(3..)?.iter().position(|&c| c == b'\'')?;
        return Some(3 + close + 1);
    }
    let first = *b.get(1)?;
    let n = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (b.get(1 + n) == Some(&b'\'')).then_some(n + 2)
}

/// A raw literal's length after its `r`: `#`s, a quoted body, as many `#`s again.
fn raw_len(b: &[u8]) -> Option<usize> {
    let hashes = b.iter().take_while(|&&c| c == b'#').count();
    if b.get(hashes) != Some(&b'"') {
        return None;
    }
    let body = hashes + 1;
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    Some(
        b[body..]
            .windows(close.len())
            .position(|w| w == close.as_slice())
            .map_or(b.len(), |at| body + at + close.len()),
    )
}

/// The module path a file defines within its crate (`engine::uring`; `crate` for the
/// root), from its path relative to the crate's `src/`.
pub fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "main" | "mod")
    ) {
        parts.pop();
    }
    parts
}

fn ident_at(code: &[u8], at: usize) -> (String, usize) {
    let end = code[at..]
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .map_or(code.len(), |p| at + p);
    (String::from_utf8_lossy(&code[at..end]).into_owned(), end)
}

/// Every module path the code refers to, as written after `crate::`, `super::` or
/// `self::` (`super` resolved against `module`): each segment up to the first
/// non-module one is kept; the caller keeps the longest prefix that is a module. Paths
/// inside `use a::{b, c}` groups are expanded one level.
pub fn references(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let boundary =
            i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':');
        let (word, end) = ident_at(b, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        if !boundary || !b[end..].starts_with(b"::") {
            i = end;
            continue;
        }
        // The module the path is relative to.
        let mut base: Vec<String> = match word.as_str() {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            _ => {
                i = end;
                continue;
            }
        };
        let mut j = end;
        // Further `super::` segments.
        while b[j..].starts_with(b"::super") {
            base.pop();
            j += "::super".len();
        }
        let mut path = base;
        loop {
            if !b[j..].starts_with(b"::") {
                break;
            }
            j += 2;
            if b.get(j) == Some(&b'{') {
                // A group: each member's first segment.
                let close = b[j..]
                    .iter()
                    .position(|&c| c == b'}')
                    .map_or(b.len(), |p| j + p);
                for member in String::from_utf8_lossy(&b[j + 1..close]).split(',') {
                    let first = member
                        .trim()
                        .split("::")
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    if !first.is_empty() && first != "self" {
                        let mut p = path.clone();
                        p.push(first);
                        out.push(p);
                    }
                }
                j = close;
                break;
            }
            let (seg, e) = ident_at(b, j);
            if seg.is_empty() {
                break;
            }
            path.push(seg);
            j = e;
        }
        out.push(path);
        i = j.max(i + 1);
    }
    out
}

/// A crate's module graph: module → modules it refers to (the longest prefix of each
/// reference that is a module of the crate; a module's references to itself, its
/// ancestors and its descendants left out, as a parent and its child are one unit).
pub fn module_graph(
    src_dir: &Path,
    files: &[std::path::PathBuf],
) -> BTreeMap<String, BTreeSet<String>> {
    let mods: BTreeMap<Vec<String>, &std::path::PathBuf> = files
        .iter()
        .map(|f| (module_of(f.strip_prefix(src_dir).expect("under src")), f))
        .collect();
    let mut graph = BTreeMap::new();
    for (m, f) in &mods {
        let code = code(&std::fs::read_to_string(f).expect("readable source"));
        let mut deps = BTreeSet::new();
        for r in references(&code, m) {
            let target = (0..=r.len())
                .rev()
                .map(|k| &r[..k])
                .find(|p| mods.contains_key(*p));
            if let Some(t) = target {
                let related = t.starts_with(m) || m.starts_with(t);
                if !related {
                    deps.insert(t.join("::"));
                }
            }
        }
        graph.insert(m.join("::"), deps);
    }
    graph
}

/// The cycles of a graph: each strongly connected component with more than one module.
pub fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: order by finish time, then components on the reversed graph.
    fn finish(
        g: &BTreeMap<String, BTreeSet<String>>,
        v: &str,
        seen: &mut BTreeSet<String>,
        order: &mut Vec<String>,
    ) {
        if !seen.insert(v.to_string()) {
            return;
        }
        for w in g.get(v).into_iter().flatten() {
            finish(g, w, seen, order);
        }
        order.push(v.to_string());
    }
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    for v in graph.keys() {
        finish(graph, v, &mut seen, &mut order);
    }
    let mut reversed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (v, ws) in graph {
        for w in ws {
            reversed.entry(w.clone()).or_default().insert(v.clone());
        }
    }
    let mut assigned = BTreeSet::new();
    let mut out = Vec::new();
    for v in order.iter().rev() {
        let mut comp = Vec::new();
        finish(&reversed, v, &mut assigned, &mut comp);
        if comp.len() > 1 {
            comp.sort();
            out.push(comp);
        }
    }
    out
}

/// Every function with a body: (name, first line, lines from `fn` to its closing brace).
pub fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("fn ") {
        let at = i + p;
        i = at + 3;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let (name, _) = ident_at(b, at + 3);
        if name.is_empty() {
            continue; // `fn(` types
        }
        let Some(open) = code[at..].find(['{', ';']).map(|q| at + q) else {
            break;
        };
        if b[open] == b';' {
            continue; // a declaration without a body
        }
        let mut depth = 0usize;
        let mut close = open;
        for (k, &c) in b[open..].iter().enumerate() {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let first = code[..at].matches('\n').count() + 1;
        let last = code[..close].matches('\n').count() + 1;
        out.push((name, first, last - first + 1));
    }
    out
}

/// What a crate root may hold besides doc comments and attributes: module declarations
/// (`mod a;`, `pub mod a;`, no inline bodies) and imports and re-exports (`use`, `pub
/// use`); the binary's root `src/main.rs` also its `fn main` (the process's entry, which
/// has nowhere else to live). Every other item (a type, a function, a constant, a macro,
/// an inline module) belongs in a module of its own, so that modules never import from
/// the root they are declared in. Returns each other item: its line and its start.
pub fn root_items_besides_modules(src: &str, is_main: bool) -> Vec<String> {
    let code = code(src);
    let mut found = Vec::new();
    let (mut depth, mut start, mut line, mut start_line) = (0usize, None, 1usize, 1usize);
    let chars: Vec<char> = code.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if start.is_none() && !c.is_whitespace() {
            (start, start_line) = (Some(i), line);
        }
        match c {
            '\n' => line += 1,
            '{' | '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
        // An item ends with `;`, or with the `}` closing its body (`use a::{b};` ends
        // at its `;`); an attribute's `]` does not end one.
        let ends = depth == 0 && (c == ';' || (c == '}' && next != Some(&';')));
        if let (true, Some(s)) = (ends, start) {
            let item: String = chars[s..=i].iter().collect();
            let item = without_attributes(&item);
            let words: Vec<&str> = item.split_whitespace().collect();
            let item = words.join(" ");
            let declared = |kw: &str| {
                let rest = item
                    .strip_prefix("pub ")
                    .or_else(|| item.strip_prefix("pub(crate) "))
                    .unwrap_or(&item);
                rest.starts_with(kw)
            };
            let is_mod = declared("mod ") && item.ends_with(';');
            let is_use = declared("use ");
            let is_entry = is_main && item.starts_with("fn main(");
            if !(is_mod || is_use || is_entry || item.is_empty()) {
                found.push(format!(
                    "line {start_line}: {}",
                    &item[..item.len().min(60)]
                ));
            }
            start = None;
        }
    }
    found
}

/// `item` without its leading attributes (`#[…]`, `#![…]`).
fn without_attributes(item: &str) -> &str {
    let mut rest = item.trim_start();
    while rest.starts_with('#') {
        let mut depth = 0;
        let end = rest.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
            None
        });
        match end {
            Some(e) => rest = rest[e + 1..].trim_start(),
            None => break,
        }
    }
    rest
}
