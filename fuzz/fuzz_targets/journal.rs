//! The power-cut journal reader (`iogate verify`, `power_cycle`) on arbitrary bytes, and
//! on journals whose header and frames carry valid CRC-32Cs around arbitrary contents
//! (the first byte picks which), so that the checks behind the CRCs are reached: no
//! panic, and no allocation beyond the input's size.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// A journal with a valid header CRC and valid frame CRCs around `body`: the first 2
/// bytes give the header JSON's length, then the JSON, then frames of the given record
/// counts (one byte each) over what follows.
fn with_crcs(body: &[u8]) -> Vec<u8> {
    let (len, rest) = match body {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (0, body),
    };
    let (json, mut rest) = rest.split_at(len.min(rest.len()));
    let mut out = b"IOGJNL01".to_vec();
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32c::crc32c(json).to_le_bytes());
    out.extend_from_slice(json);
    while let Some((&count, more)) = rest.split_first() {
        let take = (usize::from(count) * 40).min(more.len() / 40 * 40);
        let start = out.len();
        out.extend_from_slice(b"IOGF");
        out.extend_from_slice(&((take / 40) as u32).to_le_bytes());
        out.extend_from_slice(&more[..take]);
        let crc = crc32c::crc32c(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
        rest = &more[take..];
        if take == 0 {
            // A torn tail: whatever is left, as it is.
            out.extend_from_slice(rest);
            break;
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let path = std::path::Path::new("fuzz.journal");
    let bytes = if selector % 2 == 0 {
        body.to_vec()
    } else {
        with_crcs(body)
    };
    if let Ok(c) = iogate_journal::parse(&bytes, path) {
        // Every record was checked against the header's capacity in whole units.
        let unit = u64::from(c.header.unit_bytes);
        for r in &c.records {
            if let iogate_journal::Record::Write { offset, len, .. } = *r {
                assert!(offset % unit == 0 && u64::from(len) % unit == 0);
                assert!(offset + u64::from(len) <= c.header.capacity_bytes);
            }
        }
        assert!(c.records.len() * 40 <= bytes.len());
    }
});
