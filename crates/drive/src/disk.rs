//! One interface for the drives that are not NVMe: a SATA drive (ATA, behind libata's or
//! a bridge's SCSI/ATA translation) or a SCSI drive (SAS, a virtual SCSI disk), asked for
//! its identity and its health in whatever it speaks. INQUIRY says which: a vendor
//! identification of `ATA` is the SCSI/ATA translation's mark (SAT-5 §10.4.2), and the
//! ATA commands go inside ATA PASS-THROUGH (16); any other drive is asked in SCSI. Uses
//! `ata` and `scsi` (commands and decoding) through `sg`; the runner asks it for a block
//! device whose sysfs node has a SCSI device.

use std::fs::File;

use iogate_result::disk::{DiskHealthSample, DiskIdentity, ScsiIdentity};

use crate::sg::SgError;
use crate::{ata, scsi};

/// What the drive says of itself.
///
/// Errors: [`SgError`]: the system call (ENOTTY: no SCSI device behind the file), or
/// INQUIRY or READ CAPACITY (16) refused. A VPD or log page the drive lacks is not an
/// error: the field is null.
pub fn identity(file: &File) -> Result<DiskIdentity, SgError> {
    let inquiry = scsi::commands::inquiry(file)?;
    let Some((_, vendor, product, revision)) = scsi::decode::inquiry(&inquiry) else {
        return Err(garbled("INQUIRY", "fewer than 36 bytes of standard data"));
    };
    if vendor == "ATA" {
        let data = ata::commands::identify_device(file)?;
        if !ata::decode::identify_checksum_ok(&data) {
            return Err(garbled(
                "IDENTIFY DEVICE",
                "its integrity word does not check",
            ));
        }
        return Ok(DiskIdentity::Ata(ata::decode::identify(&data)));
    }
    let capacity = scsi::commands::read_capacity_16(file)?;
    let Some((capacity_bytes, logical, physical, thin)) = scsi::decode::read_capacity_16(&capacity)
    else {
        return Err(garbled(
            "READ CAPACITY (16)",
            "a block length of 0, or short data",
        ));
    };
    let pages = scsi::commands::vpd(file, 0x00)
        .map(|d| scsi::decode::supported_vpd_pages(&d))
        .unwrap_or_default();
    let page = |code: u8| {
        pages
            .contains(&code)
            .then(|| scsi::commands::vpd(file, code).ok())
            .flatten()
    };
    let (rotation, form_factor) = page(0xB1)
        .map(|d| scsi::decode::block_characteristics(&d))
        .unwrap_or((iogate_result::disk::Rotation::NotReported, None));
    Ok(DiskIdentity::Scsi(ScsiIdentity {
        vendor,
        product,
        revision,
        serial: page(0x80).and_then(|d| scsi::decode::unit_serial(&d)),
        designators: page(0x83)
            .map(|d| scsi::decode::designators(&d))
            .unwrap_or_default(),
        capacity_bytes,
        logical_block_size_bytes: logical,
        physical_block_size_bytes: physical,
        thin_provisioned: thin,
        rotation,
        form_factor,
        block_limits: page(0xB0).and_then(|d| scsi::decode::block_limits(&d)),
        log_pages: scsi::commands::log_sense(file, 0x00)
            .map(|d| scsi::decode::supported_log_pages(&d))
            .unwrap_or_default(),
    }))
}

/// The drive's health now: SMART READ DATA and THRESHOLDS for ATA, the temperature,
/// informational exceptions, error counter and self-test log pages the drive lists for
/// SCSI.
///
/// Errors: [`SgError`] (for ATA: SMART disabled or refused; the thresholds alone may be
/// missing).
pub fn health(file: &File, identity: &DiskIdentity) -> Result<DiskHealthSample, SgError> {
    match identity {
        DiskIdentity::Ata(_) => {
            let data = ata::commands::smart_read_data(file)?;
            let thresholds = ata::commands::smart_read_thresholds(file).ok();
            let thresholds = thresholds.filter(ata::decode::smart_checksum_ok);
            let attributes = ata::decode::smart_attributes(&data, thresholds.as_ref());
            Ok(ata::decode::health_sample(attributes))
        }
        DiskIdentity::Scsi(s) => {
            let page = |code: u8| {
                s.log_pages
                    .contains(&code)
                    .then(|| scsi::commands::log_sense(file, code).ok())
                    .flatten()
            };
            let (t, ie, r, w, st) = (page(0x0D), page(0x2F), page(0x03), page(0x02), page(0x10));
            Ok(scsi::decode::health_sample(
                t.as_deref(),
                ie.as_deref(),
                r.as_deref(),
                w.as_deref(),
                st.as_deref(),
            ))
        }
    }
}

fn garbled(command: &'static str, why: &str) -> SgError {
    SgError::Io(std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("{command}: {why}"),
    ))
}

/// How a SATA or SCSI drive can be purged, from what it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskPurge {
    /// SCSI SANITIZE with this action.
    Sanitize(scsi::erase::SanitizeAction),
    /// SCSI FORMAT UNIT.
    FormatUnit,
}

impl DiskPurge {
    /// The result's name of it (`sanitize (block erase)`, `format unit`).
    pub fn name(self) -> &'static str {
        match self {
            DiskPurge::Sanitize(scsi::erase::SanitizeAction::BlockErase) => {
                "sanitize (block erase)"
            }
            DiskPurge::Sanitize(scsi::erase::SanitizeAction::CryptoErase) => {
                "sanitize (crypto erase)"
            }
            DiskPurge::FormatUnit => "format unit",
        }
    }
}

/// The purge `want` (`sanitize`, `format`, or either: `None`) chooses on this drive, by
/// what it reports: SANITIZE BLOCK ERASE, else CRYPTOGRAPHIC ERASE, else FORMAT UNIT.
///
/// Errors: why the drive cannot be purged that way (a sentence for the user).
pub fn choose_purge(
    file: &File,
    identity: &DiskIdentity,
    want: Option<&str>,
) -> Result<DiskPurge, String> {
    use scsi::erase::{supports, SanitizeAction, Support};
    if let DiskIdentity::Ata(a) = identity {
        let s = &a.sanitize;
        let has = s.block_erase || s.crypto_scramble || s.overwrite || a.security.supported;
        return Err(match has {
            false => "the ATA drive supports neither SANITIZE (IDENTIFY word 59) nor the Security feature set (word 82)".into(),
            true => "iogate does not send ATA SANITIZE or SECURITY ERASE UNIT yet (no emulator answers them to prove them on)".into(),
        });
    }
    if want != Some("format") {
        for action in [SanitizeAction::BlockErase, SanitizeAction::CryptoErase] {
            let sa = u16::from(match action {
                SanitizeAction::BlockErase => 0x02u8,
                SanitizeAction::CryptoErase => 0x03,
            });
            if supports(file, 0x48, Some(sa)) == Support::Yes {
                return Ok(DiskPurge::Sanitize(action));
            }
        }
        if want == Some("sanitize") {
            return Err("the SCSI drive reports no SANITIZE block or cryptographic erase (REPORT SUPPORTED OPERATION CODES); `method: format` uses FORMAT UNIT".into());
        }
    }
    match supports(file, 0x04, None) {
        Support::No => Err("the SCSI drive reports neither SANITIZE nor FORMAT UNIT (REPORT SUPPORTED OPERATION CODES)".into()),
        _ => Ok(DiskPurge::FormatUnit),
    }
}

/// Runs `how` to its end (bounded by `limit`), telling `progress` each percentage the
/// drive reports.
///
/// Errors: [`SgError`].
pub fn purge(
    file: &File,
    how: DiskPurge,
    limit: std::time::Duration,
    progress: &mut dyn FnMut(f64),
) -> Result<(), SgError> {
    match how {
        DiskPurge::Sanitize(action) => scsi::erase::sanitize(file, action, limit, progress),
        DiskPurge::FormatUnit => scsi::erase::format_unit(file, limit, progress),
    }
}
