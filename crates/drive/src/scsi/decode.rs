//! Decoding, without I/O, of SCSI response data into `iogate_result::disk` types: standard
//! INQUIRY data, VPD pages 00h, 80h, 83h, B0h and B1h, READ CAPACITY (16) parameter data
//! and LOG SENSE pages 00h, 02h, 03h, 0Dh, 10h and 2Fh. Child of `scsi`, whose commands
//! read them through SG_IO. Each input is taken as the drive returned it: of any length,
//! truncated or with lengths pointing past its end; nothing here panics.
//!
//! Sources: SCSI Primary Commands - 5 (SPC-5) §6.7 (INQUIRY), §7.7 (VPD pages, §7.7.6
//! Device Identification), §7.3 (log pages: §7.3.1 parameters, §7.3.6 error counters,
//! §7.3.9 Informational Exceptions, §7.3.19 Self-Test Results, §7.3.21 Temperature);
//! SCSI Block Commands - 4 (SBC-4) §5.20 (READ CAPACITY (16)), §6.6.2 (Block Device
//! Characteristics VPD page), §6.6.4 (Block Limits VPD page).

use iogate_result::disk::{
    DiskHealthDetail, DiskHealthSample, Rotation, ScsiBlockLimits, ScsiLogs, ScsiSelfTest,
};

/// The largest logical or physical block length accepted, bytes.
const MAX_BLOCK_BYTES: u32 = 1 << 20;

/// Big-endian u16 at `offset`, if the data holds it.
fn be16(data: &[u8], offset: usize) -> Option<u16> {
    let bytes = data.get(offset..offset.checked_add(2)?)?;
    u16::try_from(be(bytes)).ok()
}

/// Big-endian u32 at `offset`, if the data holds it.
fn be32(data: &[u8], offset: usize) -> Option<u32> {
    let bytes = data.get(offset..offset.checked_add(4)?)?;
    u32::try_from(be(bytes)).ok()
}

/// A big-endian number of any length; of a longer one, the low 8 bytes.
fn be(bytes: &[u8]) -> u64 {
    let low = bytes.get(bytes.len().saturating_sub(8)..).unwrap_or(bytes);
    low.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// The body of a VPD or log page: bytes 4.. for PAGE LENGTH (bytes 2..4 BE), clipped to
/// the data.
fn page_body(data: &[u8]) -> &[u8] {
    let len = usize::from(be16(data, 2).unwrap_or(0));
    let rest = data.get(4..).unwrap_or_default();
    rest.get(..len).unwrap_or(rest)
}

/// Text from bytes (ASCII, or UTF-8 when `utf8`, invalid sequences as U+FFFD): trimmed of
/// spaces and NULs at both ends; non-printable ASCII (and, unless `utf8`, any non-ASCII
/// byte) replaced by '?'.
fn text(bytes: &[u8], utf8: bool) -> String {
    let printable = |c: char| c == '\0' || (' '..='~').contains(&c) || (utf8 && !c.is_control());
    let chars: String = if utf8 {
        String::from_utf8_lossy(bytes).into_owned()
    } else {
        bytes.iter().map(|&b| char::from(b)).collect()
    };
    let mapped: String = chars
        .chars()
        .map(|c| if printable(c) { c } else { '?' })
        .collect();
    mapped.trim_matches([' ', '\0']).replace('\0', "?")
}

/// Lowercase hexadecimal of the bytes.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Standard INQUIRY data (SPC-5 §6.7.2): (peripheral device type byte 0 bits 4:0, vendor
/// bytes 8..16, product 16..32, revision 32..36), strings trimmed of spaces/NULs,
/// non-printable ASCII replaced by '?'. None when shorter than 36 bytes.
pub fn inquiry(data: &[u8]) -> Option<(u8, String, String, String)> {
    let device_type = data.first()? & 0x1F;
    let vendor = text(data.get(8..16)?, false);
    let product = text(data.get(16..32)?, false);
    let revision = text(data.get(32..36)?, false);
    Some((device_type, vendor, product, revision))
}

/// The VPD page codes of the Supported VPD Pages page (00h): bytes 4.. for PAGE LENGTH
/// (bytes 2..4 BE) bytes, clipped to the data.
pub fn supported_vpd_pages(data: &[u8]) -> Vec<u8> {
    page_body(data).to_vec()
}

/// Unit Serial Number page (80h): bytes 4.. for PAGE LENGTH bytes (bytes 2..4 BE),
/// trimmed; None when empty or the page code (byte 1) is not 80h.
pub fn unit_serial(data: &[u8]) -> Option<String> {
    data.get(1).filter(|&&page| page == 0x80)?;
    Some(text(page_body(data), false)).filter(|s| !s.is_empty())
}

/// One designator, not empty, as text (see [`designators`]); None when that is empty.
fn designator(code_set: u8, kind: u8, value: &[u8]) -> Option<String> {
    let textual = code_set == 2 || code_set == 3;
    let s = match kind {
        3 => format!("naa.{}", hex(value)),
        2 => format!("eui.{}", hex(value)),
        1 if textual => format!("t10.{}", text(value, code_set == 3)),
        8 if textual => text(value, code_set == 3),
        0 if textual => format!("vendor.{}", text(value, code_set == 3)),
        _ => format!("{kind}:{}", hex(value)),
    };
    Some(s).filter(|s| !s.is_empty() && s != "t10.")
}

/// Device Identification page (83h, SPC-5 §7.7.6): the designators whose ASSOCIATION
/// (byte 1 bits 5:4 of each descriptor) is 0 (the logical unit). Each descriptor: byte 0
/// bits 3:0 CODE SET (1 binary, 2 ASCII, 3 UTF-8), byte 1 bits 3:0 DESIGNATOR TYPE,
/// byte 3 DESIGNATOR LENGTH, designator from byte 4. Type 3 NAA → "naa.<lowercase hex>",
/// type 2 EUI-64 → "eui.<hex>", type 1 T10 vendor ID → "t10.<text>", type 8 SCSI name
/// string → the text, vendor specific (type 0) in ASCII or UTF-8 → "vendor.<text>"
/// (types 0, 1 and 8 in the binary code set: as other types); other
/// types → "<type>:<hex>" (type in decimal). Descriptors start at byte 4, list length =
/// bytes 2..4 BE, clipped; a descriptor running past the end, and an empty designator,
/// are left out.
pub fn designators(data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page_body(data);
    while let Some((header, tail)) = rest.split_first_chunk::<4>() {
        let [b0, b1, _, len] = *header;
        let Some((value, next)) = tail.split_at_checked(usize::from(len)) else {
            break;
        };
        if (b1 >> 4) & 0x3 == 0 && !value.is_empty() {
            out.extend(designator(b0 & 0x0F, b1 & 0x0F, value));
        }
        rest = next;
    }
    out
}

/// Block Limits page (B0h, SBC-4 §6.6.4): MAXIMUM TRANSFER LENGTH bytes 8..12 BE,
/// OPTIMAL TRANSFER LENGTH 12..16, MAXIMUM UNMAP LBA COUNT 20..24. None when shorter than
/// 24 bytes or the page code (byte 1) is not B0h.
pub fn block_limits(data: &[u8]) -> Option<ScsiBlockLimits> {
    data.get(1).filter(|&&page| page == 0xB0)?;
    Some(ScsiBlockLimits {
        max_transfer_blocks: be32(data, 8)?,
        optimal_transfer_blocks: be32(data, 12)?,
        max_unmap_blocks: be32(data, 20)?,
    })
}

/// Block Device Characteristics page (B1h, SBC-4 §6.6.2): MEDIUM ROTATION RATE bytes
/// 4..6 BE (0 NotReported, 1 SolidState, 0401h–FFFEh Rpm, else NotReported), NOMINAL
/// FORM FACTOR byte 7 bits 3:0 (1 `5.25"`, 2 `3.5"`, 3 `2.5"`, 4 `1.8"`, 5 `less than
/// 1.8"`, else None). (NotReported, None) when shorter than 8 bytes or the page code
/// (byte 1) is not B1h.
pub fn block_characteristics(data: &[u8]) -> (Rotation, Option<String>) {
    let (Some(&0xB1), Some(rate), Some(&form)) = (data.get(1), be16(data, 4), data.get(7)) else {
        return (Rotation::NotReported, None);
    };
    let rotation = match rate {
        1 => Rotation::SolidState,
        0x0401..=0xFFFE => Rotation::Rpm { rpm: rate },
        _ => Rotation::NotReported,
    };
    let form_factor = match form & 0x0F {
        1 => Some("5.25\""),
        2 => Some("3.5\""),
        3 => Some("2.5\""),
        4 => Some("1.8\""),
        5 => Some("less than 1.8\""),
        _ => None,
    };
    (rotation, form_factor.map(String::from))
}

/// READ CAPACITY (16) parameter data (SBC-4 §5.20.2): RETURNED LOGICAL BLOCK ADDRESS
/// bytes 0..8 BE (the last LBA), LOGICAL BLOCK LENGTH IN BYTES 8..12 BE, LOGICAL BLOCKS
/// PER PHYSICAL BLOCK EXPONENT byte 13 bits 3:0, LBPME byte 14 bit 7. Returns
/// (capacity_bytes = (last + 1) × length, saturating; logical; physical = logical <<
/// exponent, or logical when that exceeds 1 MiB; lbpme). None when shorter than 16 bytes
/// (the full data is 32), or the length is 0, not a multiple of 512 or above 1 MiB.
pub fn read_capacity_16(data: &[u8]) -> Option<(u64, u32, u32, bool)> {
    data.get(..16)?;
    let last = be(data.get(0..8)?);
    let logical = be32(data, 8)?;
    if logical == 0 || logical % 512 != 0 || logical > MAX_BLOCK_BYTES {
        return None;
    }
    let exponent = u32::from(data.get(13)? & 0x0F);
    let physical = u64::from(logical)
        .checked_shl(exponent)
        .filter(|&p| p <= u64::from(MAX_BLOCK_BYTES))
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or(logical);
    let lbpme = data.get(14)? & 0x80 != 0;
    let capacity = last.saturating_add(1).saturating_mul(u64::from(logical));
    Some((capacity, logical, physical, lbpme))
}

/// Supported Log Pages page (00h): the page codes (bytes 4.. for PAGE LENGTH = bytes
/// 2..4 BE, clipped), each & 3Fh, sorted, deduplicated.
pub fn supported_log_pages(data: &[u8]) -> Vec<u8> {
    let mut pages: Vec<u8> = page_body(data).iter().map(|b| b & 0x3F).collect();
    pages.sort_unstable();
    pages.dedup();
    pages
}

/// The log parameters of a log page (SPC-5 §7.3.1): the page header is 4 bytes (byte 0
/// bits 5:0 page code, bytes 2..4 PAGE LENGTH BE); each parameter: PARAMETER CODE bytes
/// 0..2 BE, control byte 2, PARAMETER LENGTH byte 3, value from byte 4. Returns (code,
/// value bytes) pairs in the page's order, stopping at the page length or the data's
/// end, whichever is first; a parameter whose value runs past that end is dropped.
pub fn log_parameters(data: &[u8]) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = page_body(data);
    while let Some((header, tail)) = rest.split_first_chunk::<4>() {
        let [hi, lo, _control, len] = *header;
        let Some((value, next)) = tail.split_at_checked(usize::from(len)) else {
            break;
        };
        out.push((u16::from_be_bytes([hi, lo]), value.to_vec()));
        rest = next;
    }
    out
}

/// The value of the first parameter `code` of a log page.
fn parameter(data: &[u8], code: u16) -> Option<Vec<u8>> {
    let mut params = log_parameters(data).into_iter();
    params.find(|(c, _)| *c == code).map(|(_, value)| value)
}

/// A temperature byte, °C; FFh (not available) → None.
fn celsius(byte: Option<&u8>) -> Option<u8> {
    byte.copied().filter(|&t| t != 0xFF)
}

/// Temperature page (0Dh, SPC-5 §7.3.21): (parameter 0000h TEMPERATURE = value byte 1
/// °C, parameter 0001h REFERENCE TEMPERATURE = value byte 1 °C); FFh means not available
/// → None.
pub fn temperature(data: &[u8]) -> (Option<u8>, Option<u8>) {
    let current = parameter(data, 0x0000).and_then(|v| celsius(v.get(1)));
    let reference = parameter(data, 0x0001).and_then(|v| celsius(v.get(1)));
    (current, reference)
}

/// Informational Exceptions page (2Fh, SPC-5 §7.3.9): parameter 0000h value bytes 0
/// (INFORMATIONAL EXCEPTION ADDITIONAL SENSE CODE) and 1 (… QUALIFIER), and value byte 2
/// (MOST RECENT TEMPERATURE READING, °C; FFh → None).
pub fn informational_exceptions(data: &[u8]) -> (Option<[u8; 2]>, Option<u8>) {
    let value = parameter(data, 0x0000).unwrap_or_default();
    let codes = value.get(..2).and_then(|c| <[u8; 2]>::try_from(c).ok());
    (codes, celsius(value.get(2)))
}

/// An error counter page (Write 02h / Read 03h, SPC-5 §7.3.6): parameter 0006h TOTAL
/// UNCORRECTED ERRORS, a big-endian counter of the parameter's length (1..=8 bytes;
/// longer: the low 8 bytes). None when the parameter is absent or empty.
pub fn uncorrected_errors(data: &[u8]) -> Option<u64> {
    let value = parameter(data, 0x0006).filter(|v| !v.is_empty())?;
    Some(be(&value))
}

/// Self-Test Results page (10h, SPC-5 §7.3.19): parameters 0001h–0014h of 16 bytes each:
/// value byte 0 bits 7:5 SELF-TEST CODE, bits 3:0 SELF-TEST RESULTS, byte 1 SELF-TEST
/// NUMBER, bytes 2..4 ACCUMULATED POWER ON HOURS BE. Entries whose parameter value is
/// all zero (no test), or shorter than 4 bytes, are left out; in parameter-code order
/// (0001h is the latest).
pub fn self_tests(data: &[u8]) -> Vec<ScsiSelfTest> {
    let mut entries: Vec<(u16, ScsiSelfTest)> = log_parameters(data)
        .into_iter()
        .filter(|(code, value)| (0x0001..=0x0014).contains(code) && value.iter().any(|&b| b != 0))
        .filter_map(|(code, value)| {
            let status = *value.first()?;
            let test = ScsiSelfTest {
                code: status >> 5,
                result: status & 0x0F,
                power_on_hours: be16(&value, 2)?,
            };
            Some((code, test))
        })
        .collect();
    entries.sort_by_key(|(code, _)| *code);
    entries.into_iter().map(|(_, test)| test).collect()
}

/// A health sample from the log pages read (each None when the drive lists no such page):
/// temperature_c from 0Dh, else 2Fh's most recent reading; power_on_hours from the
/// latest self-test entry's hours if any (else None); media_errors = read + write
/// uncorrected (saturating) when either is Some (None + Some = the Some); detail =
/// [`DiskHealthDetail::Scsi`] with the pages' figures.
pub fn health_sample(
    temperature_page: Option<&[u8]>,
    exceptions_page: Option<&[u8]>,
    read_errors_page: Option<&[u8]>,
    write_errors_page: Option<&[u8]>,
    self_test_page: Option<&[u8]>,
) -> DiskHealthSample {
    let (current, reference) = temperature_page.map_or((None, None), temperature);
    let (exception, exception_temperature) =
        exceptions_page.map_or((None, None), informational_exceptions);
    let read_uncorrected = read_errors_page.and_then(uncorrected_errors);
    let write_uncorrected = write_errors_page.and_then(uncorrected_errors);
    let tests = self_test_page.map(self_tests).unwrap_or_default();
    let media_errors = match (read_uncorrected, write_uncorrected) {
        (Some(r), Some(w)) => Some(r.saturating_add(w)),
        (r, w) => r.or(w),
    };
    DiskHealthSample {
        temperature_c: current.or(exception_temperature),
        power_on_hours: tests.first().map(|t| u64::from(t.power_on_hours)),
        media_errors,
        detail: DiskHealthDetail::Scsi(ScsiLogs {
            reference_temperature_c: reference,
            informational_exception: exception,
            read_uncorrected,
            write_uncorrected,
            self_tests: tests,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A VPD page: byte 1 page code, bytes 2..4 PAGE LENGTH, then `body`.
    fn vpd(code: u8, body: &[u8]) -> Vec<u8> {
        let len = u16::try_from(body.len()).unwrap_or(u16::MAX).to_be_bytes();
        [&[0x00, code, len[0], len[1]][..], body].concat()
    }

    /// A log parameter: code bytes 0..2, control byte 2 (03h: binary, LBIN), length byte 3.
    fn param(code: u16, value: &[u8]) -> Vec<u8> {
        let [hi, lo] = code.to_be_bytes();
        let len = u8::try_from(value.len()).unwrap_or(0);
        [&[hi, lo, 0x03, len][..], value].concat()
    }

    /// A log page: byte 0 page code, bytes 2..4 PAGE LENGTH, then the parameters.
    fn log_page(code: u8, params: &[Vec<u8>]) -> Vec<u8> {
        let mut page = vpd(0x00, &params.concat());
        page[0] = code;
        page
    }

    /// A self-test entry.
    fn st(code: u8, result: u8, power_on_hours: u16) -> ScsiSelfTest {
        ScsiSelfTest {
            code,
            result,
            power_on_hours,
        }
    }

    /// (temperature, power-on hours, media errors) of a sample.
    fn figures(s: &DiskHealthSample) -> (Option<u8>, Option<u64>, Option<u64>) {
        (s.temperature_c, s.power_on_hours, s.media_errors)
    }

    /// What [`inquiry`] returns for these fields.
    fn inq(t: u8, v: &str, p: &str, r: &str) -> Option<(u8, String, String, String)> {
        Some((t, v.into(), p.into(), r.into()))
    }

    #[test]
    fn inquiry_sas_ssd_and_qemu() {
        // Byte 0 type 00h; 2 VERSION (SPC-4); 3 HISUP, format 2; 4 ADDITIONAL LENGTH; 7 CMDQUE.
        let head: &[u8] = &[0x00, 0x00, 0x06, 0x12, 91, 0x00, 0x00, 0x02];
        let sas = [head, b"SEAGATE ", b"XS800LE70004    ", b"0004", &[0; 60]].concat();
        assert_eq!(sas.len(), 96);
        assert_eq!(inquiry(&sas), inq(0, "SEAGATE", "XS800LE70004", "0004"));

        let head: &[u8] = &[0x00, 0x00, 0x05, 0x12, 0x1F, 0x00, 0x00, 0x12];
        let mut q = [head, b"QEMU    ", b"QEMU HARDDISK   ", b"2.5+"].concat();
        assert_eq!(q.len(), 36);
        assert_eq!(inquiry(&q), inq(0, "QEMU", "QEMU HARDDISK", "2.5+"));
        assert_eq!(inquiry(&q[..35]), None);
        assert_eq!(inquiry(&[]), None);

        // Device type 05h under qualifier bits; NULs and spaces trimmed, the rest '?'.
        q[0] = 0x25;
        q[8..16].copy_from_slice(b"\0AB\x07C\0\0 ");
        q[16..32].copy_from_slice(&[0x20; 16]);
        q[32..36].copy_from_slice(&[0xFF, b'1', 0, b'2']);
        assert_eq!(inquiry(&q), inq(5, "AB?C", "", "?1?2"));
    }

    const NAA: &str = "naa.6000c500a1b2c3d40000000000000001";
    const NAME: &str = "naa.6000C500A1B2C3D40000000000000001";

    #[test]
    fn vpd_pages_sas_ssd() {
        let list = [0x00, 0x80, 0x83, 0x86, 0x87, 0x88, 0xB0, 0xB1, 0xB2];
        assert_eq!(supported_vpd_pages(&vpd(0x00, &list)), list);

        let serial = vpd(0x80, b"  S3N7NA0K600123    ");
        assert_eq!(serial[3], 20);
        assert_eq!(unit_serial(&serial).as_deref(), Some("S3N7NA0K600123"));

        let ident = [
            // Logical unit: NAA 6 (registered extended), binary, 16 bytes.
            &[0x01, 0x03, 0x00, 0x10][..],
            &[
                0x60, 0x00, 0xC5, 0x00, 0xA1, 0xB2, 0xC3, 0xD4, 0, 0, 0, 0, 0, 0, 0, 1,
            ],
            // Target port (association 1, SAS, PIV): NAA 5 — left out.
            &[
                0x61, 0x93, 0x00, 0x08, 0x50, 0x00, 0xC5, 0x00, 0xA1, 0xB2, 0xC3, 0xD5,
            ],
            // Relative target port (association 1) — left out.
            &[0x61, 0x94, 0x00, 0x04, 0, 0, 0, 1],
            // Target device (association 2): NAA 5 — left out.
            &[0x61, 0xA3, 0x00, 0x08, 0x50, 0, 0xC5, 0, 0xA1, 0xB2, 0, 0],
            // Logical unit: SCSI name string, UTF-8, NUL padded to 40 bytes.
            &[0x03, 0x08, 0x00, 40],
            NAME.as_bytes(),
            b"\0\0\0\0",
        ]
        .concat();
        assert_eq!(designators(&vpd(0x83, &ident)), [NAA, NAME]);

        let mut limits = vpd(0xB0, &[0u8; 0x3C]);
        limits[8..12].copy_from_slice(&[0x00, 0x00, 0xFF, 0xFF]);
        limits[12..16].copy_from_slice(&[0x00, 0x00, 0x00, 0x08]);
        limits[20..24].copy_from_slice(&[0x00, 0x02, 0x00, 0x00]);
        limits[24..28].copy_from_slice(&[0x00, 0x00, 0x00, 0x01]); // unmap descriptor count
        let want = ScsiBlockLimits {
            max_transfer_blocks: 0xFFFF,
            optimal_transfer_blocks: 8,
            max_unmap_blocks: 0x2_0000,
        };
        assert_eq!(block_limits(&limits), Some(want));

        let mut chars = vpd(0xB1, &[0u8; 0x3C]);
        chars[4..8].copy_from_slice(&[0x00, 0x01, 0x00, 0x03]); // rate 0001h, form 3: 2.5"
        let want = (Rotation::SolidState, Some("2.5\"".to_string()));
        assert_eq!(block_characteristics(&chars), want);
    }

    #[test]
    fn read_capacity_16_sas_ssd_and_qemu() {
        // 800 GB: 1,562,824,368 blocks of 512 bytes, 8 per physical block, LBPME + LBPRZ.
        let mut rc = vec![0u8; 32];
        rc[0..8].copy_from_slice(&[0, 0, 0, 0, 0x5D, 0x26, 0xCE, 0xAF]);
        rc[8..12].copy_from_slice(&[0x00, 0x00, 0x02, 0x00]);
        rc[13] = 0x03;
        rc[14] = 0xC0;
        let want = Some((800_166_076_416, 512, 4096, true));
        assert_eq!(read_capacity_16(&rc), want);

        // QEMU scsi-hd, 1 GiB of 512-byte blocks, no discard; 16 bytes are enough.
        let mut q = vec![0u8; 32];
        q[4..8].copy_from_slice(&[0x00, 0x1F, 0xFF, 0xFF]);
        q[8..12].copy_from_slice(&[0x00, 0x00, 0x02, 0x00]);
        assert_eq!(read_capacity_16(&q), Some((1 << 30, 512, 512, false)));
        assert_eq!(read_capacity_16(&q[..16]), Some((1 << 30, 512, 512, false)));
        assert_eq!(read_capacity_16(&q[..15]), None);

        let with = |last: u64, len: u32, exp: u8| {
            let mut d = vec![0u8; 32];
            d[0..8].copy_from_slice(&last.to_be_bytes());
            d[8..12].copy_from_slice(&len.to_be_bytes());
            d[13] = exp;
            read_capacity_16(&d)
        };
        assert_eq!(with(99, 0, 0), None);
        assert_eq!(with(99, 520, 0), None);
        assert_eq!(with(99, 2 << 20, 0), None);
        let mib = 1 << 20;
        assert_eq!(with(99, mib, 0), Some((100 * 1024 * 1024, mib, mib, false)));
        assert_eq!(with(u64::MAX, 4096, 0), Some((u64::MAX, 4096, 4096, false)));
        // 4096 << 9 = 2 MiB: more than 1 MiB, the logical length stands.
        assert_eq!(with(0, 4096, 9), Some((4096, 4096, 4096, false)));
        // Only bits 3:0 of byte 13 are the exponent.
        assert_eq!(with(0, 512, 0xF1), Some((512, 512, 1024, false)));
    }

    #[test]
    fn vpd_truncated_wrong_page_and_long_length() {
        assert!(supported_vpd_pages(&[]).is_empty());
        assert!(supported_vpd_pages(&[0x00, 0x00, 0x00]).is_empty());
        // PAGE LENGTH 255 with 3 codes present: clipped; PAGE LENGTH 1: the first only.
        let clipped = [0, 0, 0, 0xFF, 0, 0x80, 0x83];
        assert_eq!(supported_vpd_pages(&clipped), [0, 0x80, 0x83]);
        assert_eq!(supported_vpd_pages(&[0, 0, 0, 1, 0x00, 0x80, 0x83]), [0]);

        assert_eq!(unit_serial(&vpd(0x80, b"    ")), None);
        assert_eq!(unit_serial(&vpd(0x83, b"ABC")), None);
        let long = [0x00, 0x80, 0x00, 0x40, b'X', b'Y'];
        assert_eq!(unit_serial(&long).as_deref(), Some("XY"));
        assert_eq!(unit_serial(&[0x00, 0x80]), None);

        let limits = vpd(0xB0, &[0u8; 0x3C]);
        assert_eq!(block_limits(&limits[..23]), None);
        assert!(block_limits(&limits[..24]).is_some());
        assert_eq!(block_limits(&vpd(0xB1, &[0u8; 0x3C])), None);

        let rpm = |rate: u16, form: u8| {
            let [hi, lo] = rate.to_be_bytes();
            let (rotation, form) = block_characteristics(&vpd(0xB1, &[hi, lo, 0x00, form]));
            (rotation, form.unwrap_or_default())
        };
        let (rotating, no) = (|rpm| Rotation::Rpm { rpm }, Rotation::NotReported);
        assert_eq!(rpm(7200, 0x02), (rotating(7200), "3.5\"".into()));
        assert_eq!(rpm(15000, 0xF1), (rotating(15000), "5.25\"".into()));
        assert_eq!(rpm(0x0400, 4), (no, "1.8\"".into()));
        assert_eq!(rpm(0xFFFF, 5), (no, "less than 1.8\"".into()));
        assert_eq!(rpm(0x0001, 6), (Rotation::SolidState, String::new()));
        let (chars, wrong) = (vpd(0xB1, &[0, 1, 0, 3]), vpd(0xB0, &[0, 1, 0, 3]));
        assert_eq!(block_characteristics(&chars[..7]), (no, None));
        assert_eq!(block_characteristics(&wrong), (no, None));
    }

    #[test]
    fn designators_types_and_truncation() {
        let body = [
            &[0x01, 0x02, 0x00, 0x08, 0x00, 0x25, 0x38, 0, 0, 0, 0, 0xAB][..], // EUI-64
            &[0x02, 0x01, 0x00, 0x0C],                                         // T10 vendor ID
            b"ATA     X1  ",
            &[0x02, 0x00, 0x00, 0x03, b'd', b'r', b'v'], // vendor specific, ASCII
            &[0x01, 0x0A, 0x00, 0x02, 0xDE, 0xAD],       // UUID type
            &[0x01, 0x03, 0x00, 0x00],                   // empty NAA: left out
            &[0x01, 0x08, 0x00, 0x01, 0x7F],             // name string, binary code set
        ]
        .concat();
        let got = designators(&vpd(0x83, &body));
        assert_eq!(got[..2], ["eui.00253800000000ab", "t10.ATA     X1"]);
        assert_eq!(got[2..], ["vendor.drv", "10:dead", "8:7f"]);

        // QEMU scsi-hd: an ASCII vendor-specific designator, then NAA 5 (its wwn).
        let q = [
            &[0x02, 0x00, 0x00, 0x05][..],
            b"drive",
            &[0x01, 0x03, 0x00, 0x08],
            &[0x50, 0x01, 0x40, 0x50, 0x00, 0x00, 0x00, 0x01],
        ]
        .concat();
        let page = vpd(0x83, &q);
        assert_eq!(designators(&page), ["vendor.drive", "naa.5001405000000001"]);

        // A descriptor running past the data's end is dropped, earlier ones stay.
        assert_eq!(designators(&page[..page.len() - 1]), ["vendor.drive"]);
        assert!(designators(&page[..7]).is_empty());
        // PAGE LENGTH beyond the data: clipped; shorter: what follows is ignored.
        let mut long = page.clone();
        long[2..4].copy_from_slice(&[0xFF, 0xFF]);
        assert_eq!(designators(&long).len(), 2);
        long[2..4].copy_from_slice(&[0x00, 0x09]);
        assert_eq!(designators(&long), ["vendor.drive"]);
    }

    #[test]
    fn log_pages_supported_and_parameters() {
        let list = [0x00, 0x02, 0x03, 0x0D, 0x10, 0x2F, 0x4D, 0x0D, 0x06, 0x00];
        let page = vpd(0x00, &list);
        let want = [0x00, 0x02, 0x03, 0x06, 0x0D, 0x10, 0x2F];
        assert_eq!(supported_log_pages(&page), want);
        assert_eq!(supported_log_pages(&page[..6]), [0x00, 0x02]);

        // A zero-length parameter, then an 8-byte one.
        let counter = [0, 0, 0, 0, 0, 0, 1, 2];
        let page = log_page(0x02, &[param(0x0000, &[]), param(0x0006, &counter)]);
        assert_eq!(&page[..8], [0x02, 0x00, 0x00, 16, 0x00, 0x00, 0x03, 0x00]);
        assert_eq!(&page[8..12], [0x00, 0x06, 0x03, 0x08]);
        assert_eq!(log_parameters(&page), [(0, vec![]), (6, counter.to_vec())]);
        assert_eq!(uncorrected_errors(&page), Some(0x0102));

        // The second parameter's value runs past the data's end: dropped.
        assert_eq!(log_parameters(&page[..19]), [(0, vec![])]);
        assert!(log_parameters(&page[..3]).is_empty());
        assert!(log_parameters(&page[..7]).is_empty());
        // PAGE LENGTH past the end: clipped to the data.
        let mut long = page.clone();
        long[2..4].copy_from_slice(&[0x10, 0x00]);
        assert_eq!(log_parameters(&long).len(), 2);
        // PAGE LENGTH ending within the second parameter: it is dropped.
        long[2..4].copy_from_slice(&[0x00, 0x0A]);
        assert_eq!(log_parameters(&long), [(0, vec![])]);
    }

    #[test]
    fn temperature_exceptions_and_counters() {
        let page = log_page(0x0D, &[param(0, &[0x00, 36]), param(1, &[0x00, 65])]);
        assert_eq!(&page[4..10], [0x00, 0x00, 0x03, 0x02, 0x00, 36]);
        assert_eq!(temperature(&page), (Some(36), Some(65)));
        let na = log_page(0x0D, &[param(0, &[0x00, 0xFF]), param(1, &[0x00])]);
        assert_eq!(temperature(&na), (None, None));
        assert_eq!(temperature(&page[..9]), (None, None));

        let ie = log_page(0x2F, &[param(0, &[0x5D, 0x10, 41, 0, 0, 0, 0, 0])]);
        let want = (Some([0x5D, 0x10]), Some(41));
        assert_eq!(informational_exceptions(&ie), want);
        let ie = log_page(0x2F, &[param(0, &[0x00, 0x00, 0xFF])]);
        assert_eq!(informational_exceptions(&ie), (Some([0, 0]), None));
        let ie = log_page(0x2F, &[param(0, &[0x00])]);
        assert_eq!(informational_exceptions(&ie), (None, None));
        assert_eq!(informational_exceptions(&log_page(0x2F, &[])), (None, None));

        let counter = |value: &[u8]| uncorrected_errors(&log_page(0x03, &[param(6, value)]));
        assert_eq!(counter(&[5]), Some(5));
        assert_eq!(counter(&[0xFF; 8]), Some(u64::MAX));
        let ten = [0xAA, 0xBB, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
        assert_eq!(counter(&ten), Some(0x0102_0304_0506_0708));
        assert_eq!(counter(&[]), None);
        assert_eq!(uncorrected_errors(&log_page(0x03, &[param(5, &[1])])), None);
    }

    /// A Self-Test Results page of 20 entries: those in `filled` (parameter code, value
    /// bytes 0..4), the rest all zero.
    fn self_test_page(filled: &[(u16, [u8; 4])]) -> Vec<u8> {
        let entry = |code| {
            let head = filled.iter().find(|e| e.0 == code).map_or([0; 4], |e| e.1);
            param(code, &[&head[..], &[0; 12]].concat())
        };
        log_page(0x10, &(1..=0x14u16).map(entry).collect::<Vec<_>>())
    }

    #[test]
    fn self_tests_skip_empty_entries() {
        // 0001h: background short (code 1) completed (0), test 3, at 4660 h; 0002h:
        // background extended (2) aborted (3); 0003h empty; 0004h: result 7 (failed).
        let (first, second) = ((1, [0x20, 3, 0x12, 0x34]), (2, [0x43, 2, 0x12, 0x00]));
        let page = self_test_page(&[first, second, (4, [0x57, 1, 0x00, 0x10])]);
        assert_eq!(page.len(), 4 + 20 * 20);
        assert_eq!(&page[4..12], [0x00, 0x01, 0x03, 0x10, 0x20, 3, 0x12, 0x34]);
        let want = [st(1, 0, 0x1234), st(2, 3, 0x1200), st(2, 7, 0x0010)];
        assert_eq!(self_tests(&page), want);
        assert!(self_tests(&self_test_page(&[])).is_empty());
        // Truncated in the second entry: only the first stays.
        assert_eq!(self_tests(&page[..40]), want[..1]);

        // Out of order in the page, and a parameter code outside 0001h–0014h.
        let (one, two) = (param(1, &[0x40, 0, 0, 9]), param(2, &[0x20, 0, 0, 7]));
        let page = log_page(0x10, &[two, param(0x8000, &[1; 16]), one]);
        assert_eq!(self_tests(&page), [st(2, 0, 9), st(1, 0, 7)]);
    }

    #[test]
    fn health_sample_sas_ssd() {
        let temp = log_page(0x0D, &[param(0, &[0x00, 36]), param(1, &[0x00, 65])]);
        let ie = log_page(0x2F, &[param(0, &[0x00, 0x00, 38])]);
        let read = log_page(0x03, &[param(0, &[0; 8]), param(6, &[0, 0, 0, 4])]);
        let write = log_page(0x02, &[param(6, &[0, 0, 0, 0, 0, 0, 0, 2])]);
        let tests = self_test_page(&[(1, [0x20, 3, 0x12, 0x34])]);
        let all = [&temp, &ie, &read, &write, &tests].map(|p| Some(p.as_slice()));
        let s = health_sample(all[0], all[1], all[2], all[3], all[4]);
        assert_eq!(figures(&s), (Some(36), Some(0x1234), Some(6)));
        let want = ScsiLogs {
            reference_temperature_c: Some(65),
            informational_exception: Some([0, 0]),
            read_uncorrected: Some(4),
            write_uncorrected: Some(2),
            self_tests: vec![st(1, 0, 0x1234)],
        };
        assert_eq!(s.detail, DiskHealthDetail::Scsi(want));

        // No 0Dh: 2Fh's reading; one counter only; a self-test page without entries.
        let s = health_sample(None, Some(&ie), Some(&read), None, None);
        assert_eq!(figures(&s), (Some(38), None, Some(4)));
        let s = health_sample(None, None, None, Some(&write), Some(&self_test_page(&[])));
        assert_eq!(figures(&s), (None, None, Some(2)));

        let s = health_sample(None, None, None, None, None);
        assert_eq!(figures(&s), (None, None, None));
        let empty = ScsiLogs {
            reference_temperature_c: None,
            informational_exception: None,
            read_uncorrected: None,
            write_uncorrected: None,
            self_tests: vec![],
        };
        assert_eq!(s.detail, DiskHealthDetail::Scsi(empty));
    }

    #[test]
    fn garbage_never_panics() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let page_codes = [0x00, 0x80, 0x83, 0xB0, 0xB1];
        for round in 0..4000 {
            let len = (next() % 600) as usize;
            let mut data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            // Plausible headers reach the deeper paths: a known page, a short length.
            if round % 2 == 0 && len >= 3 {
                (data[1], data[2]) = (page_codes[round / 2 % page_codes.len()], 0);
            }
            let d = data.as_slice();
            let _ = (inquiry(d), unit_serial(d), block_limits(d));
            let _ = (block_characteristics(d), read_capacity_16(d));
            let _ = temperature(d);
            let _ = (informational_exceptions(d), uncorrected_errors(d));
            assert!(supported_vpd_pages(d).len() <= len);
            assert!(designators(d).len() <= len / 4);
            assert!(supported_log_pages(d).len() <= 64);
            assert!(log_parameters(d).len() <= len / 4);
            assert!(self_tests(d).len() <= len / 4);
            let _ = health_sample(Some(d), Some(d), Some(d), Some(d), Some(d));
        }
    }
}
