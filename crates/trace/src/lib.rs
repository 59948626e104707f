//! Block trace readers: each streams a trace file as [`TraceRequest`]s (memory does not
//! grow with the trace) and reports malformed records with their line or record number.
//!
//! Formats and their units (stated once here, converted to bytes and nanoseconds):
//!
//! | format | record | time | offsets, sizes |
//! |---|---|---|---|
//! | fio iolog v2 | `file action [offset length]` | the sum of the `wait`s before it (µs; below 100 discarded, as fio) | bytes |
//! | fio iolog v3 | `µs file action [offset length]` (fio `iolog.c` writes `utime_since_now`) | µs | bytes |
//! | DiskSim ASCII | `time device lba size flags` (flags bit 0: 1 = read) | ms (DiskSim) or ns (MQSim), given by the caller | 512-byte sectors |
//! | MSR Cambridge CSV | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | 100 ns ticks (Windows filetime) | bytes |
//! | UMass / SPC CSV | `ASU,LBA,Size,Opcode,Timestamp` | s | LBA in 512-byte blocks, size in bytes |
//! | VMware vSCSI CSV | `version,time,op,size,lbn` (SCSI opcode in hex) | s | lbn in 512-byte blocks, size in bytes |
//! | blktrace binary | `struct blk_io_trace` (48 bytes, little-endian, magic `0x656174xx`) + payload | ns | sectors, bytes |
//! | blkparse text | `maj,min cpu seq s.ns pid action RWBS sector + sectors` | ns | 512-byte sectors |
//! | iogate request log | `ios.parquet` rows (the runner's `requestlog`; [`request_log`] reads it) | ns | bytes |
//!
//! Text formats: a UTF-8 byte order mark before line 1 is dropped; line 1 is a header
//! only when it looks like one (each reader says how), else a malformed line; a time or
//! extent beyond 64 bits of ns or bytes after its unit's conversion is malformed (checked
//! arithmetic at every conversion: `sectors`, `check_extent`, `float_to_ns`).
//!
//! [`open`] (in `open`) picks the reader for an `iogate_spec::TraceFormat`; the
//! runner's replay and trace analysis (the report crate) read through it. What every
//! reader shares (the request, its errors, checked unit conversions, text lines) is
//! `request`'s.

mod blkparse;
mod blktrace;
pub mod chunks;
mod csv;
mod open;
mod pairing;
pub mod parquet_parts;
mod request;
pub mod request_log;
mod text;

pub use blkparse::BlkparseReader;
pub use blktrace::BlktraceReader;
pub use csv::{CsvFormat, CsvReader};
pub use open::{choose_format, guess_format, open, TraceStream};
pub use request::{
    TimeUnit, TraceError, TraceRequest, MAX_ECHO_CHARS, MAX_LINE_BYTES, MAX_REQUEST_BYTES,
};
pub use text::{DiskSimReader, FioIologReader};
