//! SCSI commands that read what a drive says of itself: INQUIRY (standard data and VPD
//! pages), READ CAPACITY (16) and LOG SENSE. Child of `scsi`; sends through `sg`, and
//! `decode` reads what comes back.
//!
//! Sources: SPC-5 §6.7 (INQUIRY, 12h: EVPD byte 1 bit 0, PAGE CODE byte 2, ALLOCATION
//! LENGTH bytes 3–4), §6.8 (LOG SENSE, 4Dh: PC byte 2 bits 7:6, PAGE CODE bits 5:0,
//! ALLOCATION LENGTH bytes 7–8); SBC-4 §5.20 (READ CAPACITY (16): SERVICE ACTION IN (16)
//! 9Eh, service action 10h, ALLOCATION LENGTH bytes 10–13).

use std::fs::File;

use crate::sg::{self, SgError};

const TIMEOUT_MS: u32 = 30_000;
/// Bytes asked of a page: a log or VPD page longer than this is read in part (every page
/// iogate decodes fits).
const PAGE_BYTES: usize = 4096;

fn read(file: &File, name: &'static str, cdb: &[u8], len: usize) -> Result<Vec<u8>, SgError> {
    let mut data = vec![0u8; len];
    let (n, _) = sg::read(file, name, cdb, &mut data, TIMEOUT_MS)?;
    data.truncate(n);
    Ok(data)
}

/// Standard INQUIRY data (96 bytes asked).
///
/// Errors: [`SgError`] (ENOTTY: not a SCSI device).
pub fn inquiry(file: &File) -> Result<Vec<u8>, SgError> {
    read(file, "INQUIRY", &[0x12, 0, 0, 0, 96, 0], 96)
}

/// The vital product data page `page` (INQUIRY with EVPD).
///
/// Errors: [`SgError`] (ILLEGAL REQUEST for a page the drive does not have).
pub fn vpd(file: &File, page: u8) -> Result<Vec<u8>, SgError> {
    let [hi, lo] = (PAGE_BYTES as u16).to_be_bytes();
    read(
        file,
        "INQUIRY (VPD)",
        &[0x12, 1, page, hi, lo, 0],
        PAGE_BYTES,
    )
}

/// READ CAPACITY (16) parameter data (32 bytes).
///
/// Errors: [`SgError`].
pub fn read_capacity_16(file: &File) -> Result<Vec<u8>, SgError> {
    let mut c = [0u8; 16];
    c[0] = 0x9E;
    c[1] = 0x10;
    c[13] = 32;
    read(file, "READ CAPACITY (16)", &c, 32)
}

/// Log page `page` with its cumulative values (PC 01b).
///
/// Errors: [`SgError`] (ILLEGAL REQUEST: no LOG SENSE, or no such page).
pub fn log_sense(file: &File, page: u8) -> Result<Vec<u8>, SgError> {
    let [hi, lo] = (PAGE_BYTES as u16).to_be_bytes();
    let c = [0x4D, 0, 0x40 | (page & 0x3f), 0, 0, 0, 0, hi, lo, 0];
    read(file, "LOG SENSE", &c, PAGE_BYTES)
}
