//! `include:` resolved: each fragment file read (relative to the file that includes
//! it, at most [`MAX_FRAGMENTS`] files, chains at most [`MAX_DEPTH`] deep), parsed as
//! the shape its place holds (a list of steps, of assertions, a map of baseline rules)
//! and spliced in with its [`Origin`]. A missing or unreadable file, a cycle, or a
//! fragment's YAML error is a diagnostic in the file that has it, with the chain of
//! includes as notes. Child of `compile` (called by `compose`); `group` compiles a
//! fragment's steps with its file as the current source.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use super::*;
use crate::document::{Fragment, Origin, RawAssertion, SpannedPairs};

/// Most fragment files one spec may read.
pub const MAX_FRAGMENTS: usize = 256;
/// Most `include:`s one spec may follow (a fragment included from many places is read
/// once but parsed at each: this bounds a tree of includes that would grow
/// exponentially).
pub const MAX_INCLUDES: usize = 4096;
/// Longest chain of includes.
pub const MAX_DEPTH: usize = 32;
/// Most bytes of YAML one spec's composition parses, the spec and every include of a
/// fragment counted (a fragment included from N places counts N times): bounds the
/// work and memory of `check`, whatever the files and includes (64 includes of one
/// 1 MiB fragment would otherwise parse 64 MiB).
pub const MAX_COMPOSED_BYTES: usize = 4 << 20;

/// An assertion with where it was written.
pub type SourcedAssertion = (Origin, Spanned<String>);
/// A baseline rule (metric path, tolerance) with where it was written.
pub type SourcedRule = (Origin, Spanned<String>, Spanned<String>);

/// The files of a composed spec (0: the spec) and the mistakes found reading them.
pub(super) struct Sources {
    pub files: Vec<SourceFile>,
    canonical: Vec<Option<PathBuf>>,
    pub diags: Vec<Diagnostic>,
    /// Indices of the files being read, outermost first (for cycles).
    stack: Vec<usize>,
    /// `include:`s followed so far.
    followed: usize,
    /// Bytes of YAML parsed so far, the spec's included.
    parsed: usize,
}

/// A byte range of a value in `src` (serde-saphyr's span, else its line and column).
pub(crate) fn range_of<T>(src: &SourceFile, s: &Spanned<T>) -> Range<usize> {
    let sp = s.referenced.span();
    match (sp.byte_offset(), sp.byte_len()) {
        (Some(o), Some(l)) => o as usize..(o + l) as usize,
        _ => {
            let o = src.offset_of(s.referenced.line() as usize, s.referenced.column() as usize);
            o..o
        }
    }
}

/// A fragment's path relative to the spec's directory (`fragments/pts-purge.yaml`),
/// however the spec's path was given: what `plan` shows and the digest covers.
pub(super) fn relative_name(spec: &SourceFile, fragment: &SourceFile) -> String {
    let dir = Path::new(&spec.name).parent().unwrap_or(Path::new(""));
    Path::new(&fragment.name)
        .strip_prefix(dir)
        .unwrap_or(Path::new(&fragment.name))
        .display()
        .to_string()
}

impl Sources {
    pub fn new(root: &SourceFile) -> Sources {
        Sources {
            files: vec![root.clone()],
            canonical: vec![std::fs::canonicalize(&root.name).ok()],
            diags: Vec::new(),
            stack: vec![0],
            followed: 0,
            parsed: root.text.len(),
        }
    }

    fn error(&mut self, from: &Origin, at: &Spanned<String>, message: &str, label: String) {
        let src = &self.files[from.source];
        let mut d = src.diagnostic(range_of(src, at), message, label);
        d.notes.extend(from.chain.iter().cloned());
        self.diags.push(d);
    }

    /// The file `path` names (relative to `from`'s file): (as joined, as shown, its
    /// canonical path), or None after a diagnostic: not a YAML fragment (nor a link to
    /// one), or unreadable.
    fn locate(
        &mut self,
        from: &Origin,
        path: &Spanned<String>,
    ) -> Option<(PathBuf, String, PathBuf)> {
        let base = Path::new(&self.files[from.source].name)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let joined = base.join(&path.value);
        let shown = joined.display().to_string();
        // Only YAML fragments: a spec from elsewhere must not make `check` print the
        // lines of any file it can name (`include: /etc/shadow`) in a diagnostic.
        let yaml = |p: &Path| {
            p.extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("yaml") || x.eq_ignore_ascii_case("yml"))
        };
        if !yaml(&joined) {
            let label =
                format!("expected a YAML fragment (a file named *.yaml or *.yml), found `{shown}`");
            self.error(from, path, "cannot include that file", label);
            return None;
        }
        let canonical = match std::fs::canonicalize(&joined) {
            Ok(c) => c,
            Err(e) => {
                let label = format!("expected a readable file, found `{shown}`: {e}");
                self.error(from, path, "cannot read the included file", label);
                return None;
            }
        };
        if !yaml(&canonical) {
            let label = format!(
                "expected a YAML fragment (a file named *.yaml or *.yml), found `{shown}`, a link to `{}`",
                canonical.display()
            );
            self.error(from, path, "cannot include that file", label);
            return None;
        }
        Some((joined, shown, canonical))
    }

    /// Reads the file `path` names (relative to `from`'s file) and parses it as `T`.
    fn open<T: DeserializeOwned>(
        &mut self,
        from: &Origin,
        path: &Spanned<String>,
    ) -> Option<(T, Origin)> {
        let (joined, shown, canonical) = self.locate(from, path)?;
        let open = self
            .stack
            .iter()
            .position(|&i| self.canonical[i].as_ref() == Some(&canonical));
        if let Some(at) = open {
            let mut names: Vec<String> = self.stack[at..]
                .iter()
                .map(|&i| self.files[i].name.clone())
                .collect();
            names.push(shown);
            let label = format!(
                "expected a file not already being included, found {}",
                names.join(" → ")
            );
            self.error(from, path, "include cycle", label);
            return None;
        }
        self.followed += 1;
        let many = self.followed > MAX_INCLUDES || self.files.len() > MAX_FRAGMENTS;
        if self.stack.len() > MAX_DEPTH || many {
            let label = format!(
                "expected at most {MAX_FRAGMENTS} files and {MAX_INCLUDES} includes, {MAX_DEPTH} deep"
            );
            self.error(from, path, "too many includes", label);
            return None;
        }
        let index = match self
            .canonical
            .iter()
            .position(|c| c.as_ref() == Some(&canonical))
        {
            Some(i) => i,
            None => match crate::files::read_bounded(&joined, crate::files::MAX_SPEC_BYTES) {
                Ok(text) => {
                    self.files.push(SourceFile::new(shown.clone(), text));
                    self.canonical.push(Some(canonical));
                    self.files.len() - 1
                }
                Err(e) => {
                    let label = format!("expected a readable file, found `{shown}`: {e}");
                    self.error(from, path, "cannot read the included file", label);
                    return None;
                }
            },
        };
        self.parsed = self.parsed.saturating_add(self.files[index].text.len());
        if self.parsed > MAX_COMPOSED_BYTES {
            let label = format!(
                "expected at most {} MiB of YAML in all (each include counts its fragment's bytes), found {:.1} MiB with `{shown}`",
                MAX_COMPOSED_BYTES >> 20,
                self.parsed as f64 / f64::from(1u32 << 20)
            );
            self.error(from, path, "composition too large", label);
            return None;
        }
        let src = &self.files[from.source];
        let (line, col) = src.line_col(range_of(src, path).start);
        let mut chain = vec![format!("included from {}:{line}:{col}", src.name)];
        chain.extend(from.chain.iter().cloned());
        let origin = Origin {
            source: index,
            chain,
        };
        match super::yaml::parse_yaml::<T>(&self.files[index]) {
            Ok(t) => Some((t, origin)),
            Err(d) => {
                for mut item in d.items {
                    item.notes.extend(origin.chain.iter().cloned());
                    self.diags.push(item);
                }
                None
            }
        }
    }

    /// Resolves the `include:` steps of `steps` (and of their loops) in place.
    pub fn steps(&mut self, steps: &mut [Spanned<RawStep>], from: &Origin) {
        for step in steps.iter_mut() {
            match &mut step.value {
                RawStep::Include(path) => {
                    let path = path.clone();
                    let Some((mut inner, origin)) = self.open::<Vec<Spanned<RawStep>>>(from, &path)
                    else {
                        continue;
                    };
                    self.stack.push(origin.source);
                    self.steps(&mut inner, &origin);
                    self.stack.pop();
                    step.value = RawStep::Included(Box::new(Fragment {
                        origin,
                        steps: inner,
                    }));
                }
                RawStep::Loop(l) => self.steps(&mut l.steps.value, from),
                _ => {}
            }
        }
    }

    /// The assertions of `items` with their origins, includes read.
    pub fn assertions(
        &mut self,
        items: &[Spanned<RawAssertion>],
        from: &Origin,
        out: &mut Vec<SourcedAssertion>,
    ) {
        for item in items {
            let text = |v: &str| Spanned {
                value: v.to_string(),
                referenced: item.referenced,
                defined: item.defined,
                param: None,
            };
            match &item.value {
                RawAssertion::Expr(e) => out.push((from.clone(), text(e))),
                RawAssertion::Include(p) => {
                    let Some((inner, origin)) =
                        self.open::<Vec<Spanned<RawAssertion>>>(from, &text(p))
                    else {
                        continue;
                    };
                    self.stack.push(origin.source);
                    self.assertions(&inner, &origin, out);
                    self.stack.pop();
                }
            }
        }
    }

    /// The baseline rules of `pairs` with their origins, `include` keys read.
    pub fn baseline(&mut self, pairs: &SpannedPairs, from: &Origin, out: &mut Vec<SourcedRule>) {
        for (k, v) in &pairs.0 {
            if k.value != "include" {
                out.push((from.clone(), k.clone(), v.clone()));
                continue;
            }
            let Some((inner, origin)) = self.open::<SpannedPairs>(from, v) else {
                continue;
            };
            self.stack.push(origin.source);
            self.baseline(&inner, &origin, out);
            self.stack.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, Geometry, SourceFile};

    /// Each level includes the next twice: 2^20 includes if followed, stopped at
    /// [`super::MAX_INCLUDES`] with one diagnostic per include refused, quickly.
    #[test]
    fn a_tree_of_includes_is_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        for i in 0..20 {
            let text = format!("- include: f{}.yaml\n- include: f{}.yaml\n", i + 1, i + 1);
            std::fs::write(dir.path().join(format!("f{i}.yaml")), text).expect("fragment");
        }
        std::fs::write(dir.path().join("f20.yaml"), "- idle: { duration: 1ms }\n").expect("leaf");
        let spec = dir.path().join("spec.yaml");
        let text = "iogate: 1\nname: t\nsteps:\n  - include: f0.yaml\n";
        std::fs::write(&spec, text).expect("spec");
        let src = SourceFile::new(spec.display().to_string(), text);
        let started = std::time::Instant::now();
        let err = compile(&src, &Geometry::scratch()).expect_err("too many includes");
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
        assert!(
            err.items.iter().all(|d| d.message == "too many includes"),
            "{}",
            err.render()
        );
        assert!(!err.items.is_empty());
    }

    /// 64 includes of one fragment of almost 1 MiB: the composition stops parsing at
    /// [`super::MAX_COMPOSED_BYTES`], each include past it one diagnostic.
    #[test]
    fn a_composition_is_bounded_in_bytes_parsed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut big = "# padding padding padding padding padding padding padding\n".repeat(16_000);
        big.push_str("- idle: { duration: 1ms }\n");
        std::fs::write(dir.path().join("big.yaml"), big).expect("fragment");
        let mut text = "iogate: 1\nname: t\nsteps:\n".to_string();
        for i in 0..64 {
            text.push_str(&format!(
                "  - loop: {{ name: l{i}, times: 1, steps: [ {{ include: big.yaml }} ] }}\n"
            ));
        }
        let spec = dir.path().join("spec.yaml");
        std::fs::write(&spec, &text).expect("spec");
        let src = SourceFile::new(spec.display().to_string(), text);
        let started = std::time::Instant::now();
        let err = compile(&src, &Geometry::scratch()).expect_err("too large");
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
        let refused = err
            .items
            .iter()
            .filter(|d| d.message == "composition too large")
            .count();
        assert!((56..64).contains(&refused), "{refused}: {}", err.render());
    }
}
