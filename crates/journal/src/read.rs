//! Reading a journal back ([`read`], [`parse`]) for `iogate verify` and the
//! `power_cycle` step, with the journal's own integrity checked before anything is
//! allocated for it: the header's unit and capacity, every record's offset and length
//! against that capacity, and the frames themselves. Only the last frame can be torn by
//! a cut (it is counted in `tail_discarded_bytes`); a damaged frame followed by a whole
//! one is corruption, an error naming the frame and its byte offset. The crate's root (the
//! format) is its parent; `iogate-runner`'s `integrity` and `power_cycle` its callers.

use std::io::Read;
use std::path::Path;

use crate::format::{
    JournalContents, JournalError, JournalHeader, Record, FILE_MAGIC, FRAME_MAGIC, RECORD_BYTES,
};

/// Largest verification unit a journal may name, bytes (an atomic write unit of a
/// datacenter drive is at most a few hundred KiB; NVMe AWUPF is a 16-bit block count).
pub const MAX_UNIT_BYTES: u32 = 1 << 20;
/// Largest write a journal may record, bytes: the spec language's largest block size.
pub const MAX_WRITE_BYTES: u32 = 64 << 20;
/// Most sample blocks a header may hold (`integrity::SAMPLE_BLOCKS` is what runs write).
pub const MAX_SAMPLE_BLOCKS: usize = 4096;

/// Reads and checks a journal (see [`parse`]). Errors: the file cannot be read, or
/// [`parse`]'s.
pub fn read(path: &Path) -> Result<JournalContents, JournalError> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|source| JournalError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    parse(&bytes, path)
}

/// Parses a journal's bytes (`path` names it in errors). Errors (`Format`): no
/// `IOGJNL01` header, a damaged header, a header whose unit, capacity or sample is out
/// of bounds, a record that is not a write or flush or whose offset and length do not
/// fit the capacity in whole units, and a damaged frame followed by a whole one.
pub fn parse(bytes: &[u8], path: &Path) -> Result<JournalContents, JournalError> {
    let format = |message: String| JournalError::Format {
        path: path.to_path_buf(),
        message,
    };
    if bytes.len() < 16 || &bytes[0..8] != FILE_MAGIC {
        return Err(format("not an iogate journal (no IOGJNL01 header)".into()));
    }
    let len = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
    let crc = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
    let json = bytes
        .get(16..16 + len)
        .filter(|j| crc32c::crc32c(j) == crc)
        .ok_or_else(|| format("its header is damaged (its CRC-32C does not match)".into()))?;
    let header: JournalHeader =
        serde_json::from_slice(json).map_err(|e| format(format!("its header: {e}")))?;
    check_header(&header).map_err(format)?;
    let mut records = Vec::new();
    let mut at = 16 + len;
    let mut frame = 0u64;
    while let Some(end) = frame_end(&bytes[at..]) {
        for (i, r) in bytes[at + 8..at + end - 4]
            .chunks_exact(RECORD_BYTES)
            .enumerate()
        {
            let record = Record::decode(r)
                .ok_or_else(|| format(format!("frame {frame} at byte {at}: record {i} is neither a write nor a flush (kind {})", r[0])))?;
            check_record(&record, &header)
                .map_err(|m| format(format!("frame {frame} at byte {at}: record {i}: {m}")))?;
            records.push(record);
        }
        at += end;
        frame += 1;
    }
    if let Some(next) = whole_frame_after(bytes, at) {
        return Err(format(format!(
            "frame {frame} at byte {at} is damaged (bad magic, length or CRC-32C) and a whole \
             frame follows at byte {next}: the journal is corrupt, not cut (a cut can only \
             tear the last frame)"
        )));
    }
    Ok(JournalContents {
        header,
        records,
        tail_discarded_bytes: (bytes.len() - at) as u64,
    })
}

/// The header's own bounds, checked before anything is sized by it.
fn check_header(h: &JournalHeader) -> Result<(), String> {
    let unit = h.unit_bytes;
    if !(512..=MAX_UNIT_BYTES).contains(&unit) || !unit.is_power_of_two() {
        return Err(format!(
            "its header names a {unit} B verification unit: expected a power of two from \
             512 B to {MAX_UNIT_BYTES} B"
        ));
    }
    if h.capacity_bytes < u64::from(unit) {
        return Err(format!(
            "its header names a capacity of {} bytes, less than one {unit} B unit",
            h.capacity_bytes
        ));
    }
    if h.sample.len() > MAX_SAMPLE_BLOCKS {
        return Err(format!(
            "its header holds {} sample blocks: at most {MAX_SAMPLE_BLOCKS} expected",
            h.sample.len()
        ));
    }
    let end = |offset: u64| offset.checked_add(u64::from(unit));
    if let Some(s) = h.sample.iter().find(|s| {
        s.offset % u64::from(unit) != 0 || end(s.offset).is_none_or(|e| e > h.capacity_bytes)
    }) {
        return Err(format!(
            "its header samples the block at byte {}, not a whole {unit} B unit within its \
             capacity of {} bytes",
            s.offset, h.capacity_bytes
        ));
    }
    Ok(())
}

/// A write must cover whole units inside the capacity, and be no longer than the
/// largest block size.
fn check_record(r: &Record, h: &JournalHeader) -> Result<(), String> {
    let Record::Write { offset, len, .. } = *r else {
        return Ok(());
    };
    let unit = u64::from(h.unit_bytes);
    let fits = offset
        .checked_add(u64::from(len))
        .is_some_and(|e| e <= h.capacity_bytes);
    if len == 0
        || len > MAX_WRITE_BYTES
        || offset % unit != 0
        || u64::from(len) % unit != 0
        || !fits
    {
        return Err(format!(
            "a write of {len} bytes at byte {offset}: expected whole {unit} B units, at most \
             {MAX_WRITE_BYTES} bytes, within the capacity of {} bytes",
            h.capacity_bytes
        ));
    }
    Ok(())
}

/// The length of the whole, valid frame at the start of `b` (None: none there).
fn frame_end(b: &[u8]) -> Option<usize> {
    if b.len() < 12 || &b[0..4] != FRAME_MAGIC {
        return None;
    }
    let count = u32::from_le_bytes([b[4], b[5], b[6], b[7]]) as usize;
    let end = 8 + count.checked_mul(RECORD_BYTES)? + 4;
    let frame = b.get(..end)?;
    let crc = u32::from_le_bytes(frame[end - 4..].try_into().ok()?);
    (crc32c::crc32c(&frame[..end - 4]) == crc).then_some(end)
}

/// The byte offset of a whole, valid frame that starts after `at` (the first damaged
/// frame), if any: what tells corruption from a torn last frame.
fn whole_frame_after(bytes: &[u8], at: usize) -> Option<usize> {
    let mut from = at + 1;
    while from + 12 <= bytes.len() {
        let i = bytes[from..]
            .windows(FRAME_MAGIC.len())
            .position(|w| w == FRAME_MAGIC)?;
        let p = from + i;
        if frame_end(&bytes[p..]).is_some() {
            return Some(p);
        }
        from = p + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::SampleBlock;

    fn header() -> JournalHeader {
        JournalHeader {
            target: "/dev/x".into(),
            capacity_bytes: 1 << 20,
            unit_bytes: 4096,
            unit_source: crate::format::UnitSource::LogicalBlock,
            seed: 7,
            model: None,
            serial: None,
            sample: vec![SampleBlock {
                offset: 8192,
                crc32c: 3,
            }],
        }
    }

    fn write(offset: u64, len: u32) -> Record {
        Record::Write {
            seq: 0,
            offset,
            len,
            generation: 1,
            fua: true,
            ack_ns: 0,
        }
    }

    /// A journal of three frames, each one write; its bytes and each frame's offset.
    fn three_frames() -> (Vec<u8>, Vec<usize>) {
        let mut bytes = crate::format::encode_header(&header()).expect("header");
        let mut frames = Vec::new();
        for i in 0..3u64 {
            frames.push(bytes.len());
            crate::format::encode_frame(&[write(i * 4096, 4096)], &mut bytes);
        }
        (bytes, frames)
    }

    #[test]
    fn a_flipped_bit_before_the_last_frame_is_corruption_and_a_torn_last_frame_a_cut() {
        let (bytes, frames) = three_frames();
        let p = Path::new("j");
        assert_eq!(parse(&bytes, p).expect("intact").records.len(), 3);
        for (i, &at) in frames[..2].iter().enumerate() {
            let mut bad = bytes.clone();
            bad[at + 20] ^= 1;
            let e = parse(&bad, p).expect_err("corrupt").to_string();
            assert!(
                e.contains(&format!("frame {i} at byte {at} is damaged")) && e.contains("corrupt"),
                "{e}"
            );
        }
        // The last frame torn (cut short, or its bytes never written): a cut.
        let last = frames[2];
        for torn in [&bytes[..last + 30], &bytes[..bytes.len() - 1]] {
            let c = parse(torn, p).expect("a torn last frame is a cut");
            assert_eq!(c.records.len(), 2);
            assert_eq!(c.tail_discarded_bytes as usize, torn.len() - last);
        }
    }

    #[test]
    fn lengths_and_units_beyond_the_capacity_are_refused_before_any_allocation() {
        let p = Path::new("j");
        let encode = |h: &JournalHeader, records: &[Record]| {
            let mut b = crate::format::encode_header(h).expect("header");
            crate::format::encode_frame(records, &mut b);
            b
        };
        let ok = encode(&header(), &[write(0, 8192)]);
        assert_eq!(parse(&ok, p).expect("valid").records.len(), 1);
        for (h, r, says) in [
            (header(), write(1 << 20, 4096), "within the capacity"),
            (header(), write(0, !4095), "at most"),
            (header(), write(100, 4096), "whole 4096 B units"),
            (
                JournalHeader {
                    unit_bytes: 1 << 30,
                    ..header()
                },
                write(0, 4096),
                "verification unit",
            ),
            (
                JournalHeader {
                    capacity_bytes: u64::MAX,
                    sample: vec![SampleBlock {
                        offset: u64::MAX - 10,
                        crc32c: 0,
                    }],
                    ..header()
                },
                write(0, 4096),
                "samples the block",
            ),
        ] {
            let e = parse(&encode(&h, &[r]), p).expect_err(says).to_string();
            assert!(e.contains(says), "{e}");
        }
    }
}
