//! SCSI purges: SANITIZE (block erase or cryptographic erase, with IMMED, polled with
//! REQUEST SENSE until the drive leaves "sanitize in progress") and FORMAT UNIT (no
//! parameter list: the drive's default format, which on most drives rewrites or
//! unmaps every block; whether it erased is what the purge's read-back says), with
//! REPORT SUPPORTED OPERATION CODES saying which the drive has. Child of `scsi`; `disk`
//! chooses among them.
//!
//! Sources: SBC-4 §5.30 (SANITIZE, 48h: IMMED byte 1 bit 7, SERVICE ACTION bits 4:0,
//! 02h BLOCK ERASE, 03h CRYPTOGRAPHIC ERASE), §5.4 (FORMAT UNIT, 04h: FMTDATA byte 1
//! bit 4); SPC-5 §6.36 (REPORT SUPPORTED OPERATION CODES, A3h/0Ch, REPORTING OPTIONS
//! 011b, SUPPORT byte 1 bits 2:0), §6.39 (REQUEST SENSE, 03h), §4.4.2.4.4 (progress
//! indication in the sense-key specific bytes: SKSV byte 15 bit 7, PROGRESS INDICATION
//! bytes 16–17 of 65,536); SPC-5 Annex F (ASC/ASCQ 04h/04h format in progress, 04h/1Bh
//! sanitize in progress).

use std::fs::File;
use std::time::{Duration, Instant};

use crate::sg::{self, SgError};

/// A SANITIZE service action iogate asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanitizeAction {
    /// 02h: BLOCK ERASE.
    BlockErase,
    /// 03h: CRYPTOGRAPHIC ERASE.
    CryptoErase,
}

impl SanitizeAction {
    fn code(self) -> u8 {
        match self {
            SanitizeAction::BlockErase => 0x02,
            SanitizeAction::CryptoErase => 0x03,
        }
    }
}

/// Whether the drive reports a command as supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// SUPPORT 011b or 101b.
    Yes,
    /// SUPPORT 001b: not supported.
    No,
    /// The drive has no REPORT SUPPORTED OPERATION CODES (or answered 000b).
    Unknown,
}

/// REPORT SUPPORTED OPERATION CODES for `opcode` (with `service_action` when it has one).
pub fn supports(file: &File, opcode: u8, service_action: Option<u16>) -> Support {
    let options = if service_action.is_some() { 0x03 } else { 0x01 };
    let [sa_hi, sa_lo] = service_action.unwrap_or(0).to_be_bytes();
    let cdb = [
        0xA3, 0x0C, options, opcode, sa_hi, sa_lo, 0, 0, 0x02, 0x00, 0, 0,
    ];
    let mut data = [0u8; 512];
    match sg::read(
        file,
        "REPORT SUPPORTED OPERATION CODES",
        &cdb,
        &mut data,
        10_000,
    ) {
        Ok((n, _)) if n >= 2 => support_of(data[1]),
        _ => Support::Unknown,
    }
}

/// The SUPPORT field (byte 1 bits 2:0) of a one-command RSOC answer.
fn support_of(byte1: u8) -> Support {
    match byte1 & 0x7 {
        0b011 | 0b101 => Support::Yes,
        0b001 => Support::No,
        _ => Support::Unknown,
    }
}

/// SANITIZE with `action` and IMMED, then polled every second (REQUEST SENSE) until the
/// drive says it is done; `progress` is told each percentage read. Bounded by `limit`.
///
/// Errors: [`SgError`] (ILLEGAL REQUEST for an action the drive lacks; a sanitize that
/// failed leaves the drive answering MEDIUM ERROR / 31h "sanitize command failed"), or a
/// timeout past `limit`.
pub fn sanitize(
    file: &File,
    action: SanitizeAction,
    limit: Duration,
    progress: &mut dyn FnMut(f64),
) -> Result<(), SgError> {
    let cdb = [0x48, 0x80 | action.code(), 0, 0, 0, 0, 0, 0, 0, 0];
    sg::read(file, "SANITIZE", &cdb, &mut [], 60_000)?;
    poll(file, 0x1B, limit, progress)
}

/// FORMAT UNIT without a parameter list (the drive's default format), waited for in the
/// command itself (no IMMED without a parameter list), then polled as SANITIZE is.
///
/// Errors: [`SgError`].
pub fn format_unit(
    file: &File,
    limit: Duration,
    progress: &mut dyn FnMut(f64),
) -> Result<(), SgError> {
    let ms = u32::try_from(limit.as_millis()).unwrap_or(u32::MAX);
    sg::read(file, "FORMAT UNIT", &[0x04, 0, 0, 0, 0, 0], &mut [], ms)?;
    poll(file, 0x04, limit, progress)
}

/// REQUEST SENSE every second while the drive answers NOT READY with ASC 04h and ASCQ
/// `ascq` (the operation in progress).
fn poll(
    file: &File,
    ascq: u8,
    limit: Duration,
    progress: &mut dyn FnMut(f64),
) -> Result<(), SgError> {
    let started = Instant::now();
    loop {
        let mut sense = [0u8; 252];
        let (n, _) = sg::read(
            file,
            "REQUEST SENSE",
            &[0x03, 0, 0, 0, 252, 0],
            &mut sense,
            10_000,
        )?;
        let data = &sense[..n.min(sense.len())];
        let (key, asc, q) = sg::sense_codes(data);
        if !(key == 0x2 && asc == 0x04 && q == ascq) {
            return Ok(());
        }
        if let Some(p) = progress_of(data) {
            progress(p);
        }
        if started.elapsed() > limit {
            return Err(SgError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("still in progress after {} s", limit.as_secs()),
            )));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// The progress indication of sense data (fixed format bytes 15–17, descriptor format a
/// sense-key specific descriptor 02h), percent.
fn progress_of(sense: &[u8]) -> Option<f64> {
    let at = |i: usize| sense.get(i).copied();
    let sks = match at(0)? & 0x7f {
        0x70 | 0x71 => [at(15)?, at(16)?, at(17)?],
        0x72 | 0x73 => {
            let mut i = 8usize;
            loop {
                let (kind, len) = (at(i)?, usize::from(at(i + 1)?));
                if kind == 0x02 {
                    break [at(i + 4)?, at(i + 5)?, at(i + 6)?];
                }
                i = i.checked_add(2 + len)?;
            }
        }
        _ => return None,
    };
    (sks[0] & 0x80 != 0).then(|| f64::from(u16::from_be_bytes([sks[1], sks[2]])) * 100.0 / 65536.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_from_either_sense_format() {
        let mut fixed = [0u8; 18];
        fixed[0] = 0x70;
        fixed[2] = 0x02;
        fixed[12] = 0x04;
        fixed[13] = 0x1B;
        fixed[15] = 0x80;
        fixed[16..18].copy_from_slice(&0x8000u16.to_be_bytes());
        assert_eq!(progress_of(&fixed), Some(50.0));
        fixed[15] = 0; // SKSV clear: no progress given
        assert_eq!(progress_of(&fixed), None);
        // Descriptor format: an information descriptor (00h), then the sense-key specific one.
        let desc = [
            0x72, 0x02, 0x04, 0x04, 0, 0, 0, 20, // header, additional length
            0x00, 0x0A, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, // information
            0x02, 0x06, 0, 0, 0x80, 0x40, 0x00, 0, // sense-key specific: 25%
        ];
        assert_eq!(progress_of(&desc), Some(25.0));
        assert_eq!(progress_of(&desc[..22]), None, "truncated");
        assert_eq!(progress_of(&[]), None);
        // A descriptor chain of zero lengths that never names 02h ends at the data's end.
        let mut chain = vec![0x72u8, 0, 0, 0, 0, 0, 0, 0];
        chain.extend(std::iter::repeat_n([0x01u8, 0x00], 100).flatten());
        assert_eq!(progress_of(&chain), None);
    }

    #[test]
    fn support_reads_the_support_field() {
        assert_eq!(support_of(0b011), Support::Yes);
        assert_eq!(support_of(0b101), Support::Yes);
        assert_eq!(support_of(0b001), Support::No);
        assert_eq!(support_of(0b000), Support::Unknown);
        assert_eq!(support_of(0xF9), Support::No, "only bits 2:0");
    }
}
