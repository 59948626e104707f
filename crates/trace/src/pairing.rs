//! Issue/completion pairing shared by the blktrace binary and blkparse text readers: an
//! issue (`D`) waits for the completion (`C`) of the same device and sector, which gives
//! its service time; requests leave in issue order once completed (or at the end of the
//! trace), so memory grows only with requests in flight.

use std::collections::{HashMap, VecDeque};

use crate::request::TraceRequest;

struct Pending {
    request: TraceRequest,
    issue_ns: u64,
    done: bool,
}

/// Requests issued and not yet handed out.
#[derive(Default)]
pub(crate) struct Pairing {
    pending: VecDeque<Pending>,
    /// Index into `pending` (offset by `popped`) of the issue awaiting completion, by (device, sector).
    outstanding: HashMap<(u32, u64), u64>,
    popped: u64,
}

impl Pairing {
    /// An issue at `issue_ns` (absolute trace time) of `request`, keyed by device and sector.
    pub(crate) fn issue(&mut self, device: u32, sector: u64, request: TraceRequest, issue_ns: u64) {
        let index = self.popped + self.pending.len() as u64;
        self.outstanding.insert((device, sector), index);
        self.pending.push_back(Pending {
            request,
            issue_ns,
            done: false,
        });
    }

    /// A completion at `time_ns`; false when no issue of it was seen (it began before the trace).
    pub(crate) fn complete(&mut self, device: u32, sector: u64, time_ns: u64) -> bool {
        match self.outstanding.remove(&(device, sector)) {
            Some(index) => {
                if let Some(p) = self.pending.get_mut((index - self.popped) as usize) {
                    p.request.service_time_ns = Some(time_ns.saturating_sub(p.issue_ns));
                    p.done = true;
                }
                true
            }
            None => false,
        }
    }

    /// The oldest request, once it is completed or the trace has `ended`.
    pub(crate) fn pop(&mut self, ended: bool) -> Option<TraceRequest> {
        if self.pending.front().is_some_and(|p| p.done || ended) {
            self.popped += 1;
            return self.pending.pop_front().map(|p| p.request);
        }
        None
    }
}
