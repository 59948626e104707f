//! A workload's I/O path: the `engine:`, `completion:`, `submission:` and
//! `protection_information:` keywords ([`io_path`]), and what only the passthrough
//! engine can carry ([`passthrough_only`]: placement handles, host-built protection
//! information). `steps::workload` calls both; [`keyword`] serves every keyword field
//! of a step.

use super::*;

/// The keywords of a workload's I/O path.
pub(super) struct IoPath {
    pub engine: crate::plan::IoEngine,
    pub polled: bool,
    pub kernel_submission: bool,
    pub protection: crate::plan::PiAction,
}

/// `submission:`, `engine:`, `completion:` and `protection_information:`, each
/// reported when unknown; None when any was.
pub(super) fn io_path(cx: &mut Ctx<'_>, w: &RawWorkload) -> Option<IoPath> {
    let kernel_submission = keyword(
        cx,
        w.submission.as_ref(),
        "unknown submission mode",
        [("syscall", false), ("kernel_thread", true)],
        false,
    );
    let engine = keyword(
        cx,
        w.engine.as_ref(),
        "unknown engine",
        [
            ("block", crate::plan::IoEngine::Block),
            ("passthrough", crate::plan::IoEngine::Passthrough),
        ],
        crate::plan::IoEngine::Auto,
    );
    let protection = keyword(
        cx,
        w.protection_information.as_ref(),
        "unknown protection information action",
        [
            ("controller", crate::plan::PiAction::Controller),
            ("host", crate::plan::PiAction::Host),
            ("host_checked", crate::plan::PiAction::HostChecked),
        ],
        crate::plan::PiAction::Controller,
    );
    let polled = keyword(
        cx,
        w.completion.as_ref(),
        "unknown completion mode",
        [("interrupt", false), ("polled", true)],
        false,
    );
    Some(IoPath {
        engine: engine?,
        polled: polled?,
        kernel_submission: kernel_submission?,
        protection: protection?,
    })
}

/// Errors for what travels only in NVMe commands through passthrough, asked of
/// `engine: block`: placement handles on `mix`'s lines, host-built PI.
pub(super) fn passthrough_only(cx: &mut Ctx<'_>, w: &RawWorkload, mix: &[MixLine]) {
    let placed = mix.iter().any(|m| m.placement_handle.is_some());
    if let Some(e) = w.engine.as_ref().filter(|e| placed && e.value == "block") {
        let span = cx.span(e);
        cx.error_note(
            span,
            "`placement:` needs the passthrough engine",
            "expected `engine: passthrough` (or no `engine:`) with a placement handle",
            "placement handles travel in NVMe Write commands (DTYPE 2h, DSPEC), which iogate \
             sends through io_uring passthrough on the namespace's /dev/ngXnY",
        );
    }
    let host_pi = w
        .protection_information
        .as_ref()
        .filter(|p| p.value != "controller");
    if let (Some(e), Some(p)) = (w.engine.as_ref().filter(|e| e.value == "block"), host_pi) {
        let span = cx.span(e);
        cx.error_note(
            span,
            format!(
                "`protection_information: {}` needs the passthrough engine",
                p.value
            ),
            "expected `engine: passthrough` (or no `engine:`) with host-built protection \
             information",
            "the block layer builds and checks PI itself (the kernel's integrity profile); \
             iogate sends its own only in NVMe commands through io_uring passthrough",
        );
    }
}

/// A keyword field: absent is `default`, each of `choices` its value, anything else an
/// error naming the two choices.
pub(super) fn keyword<T: Copy, const N: usize>(
    cx: &mut Ctx<'_>,
    field: Option<&Spanned<String>>,
    title: &str,
    choices: [(&str, T); N],
    default: T,
) -> Option<T> {
    let Some(c) = field else {
        return Some(default);
    };
    if let Some((_, v)) = choices.iter().find(|(k, _)| *k == c.value) {
        return Some(*v);
    }
    let span = cx.span(c);
    let names: Vec<String> = choices.iter().map(|(k, _)| format!("`{k}`")).collect();
    let listed = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    };
    cx.error(
        span,
        title,
        format!("expected {listed}, found `{}`", c.value),
    );
    None
}
