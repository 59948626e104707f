//! ATA commands inside ATA PASS-THROUGH (16): IDENTIFY DEVICE, SMART READ DATA and SMART
//! READ THRESHOLDS, each one 512-byte sector read with the PIO Data-In protocol. Child of
//! `ata`; sends through `sg`, and `decode` reads what comes back.
//!
//! Sources: SAT-5 (SCSI / ATA Translation - 5) §12.2.2 (ATA PASS-THROUGH (16) command:
//! PROTOCOL byte 1 bits 4:1, T_DIR byte 2 bit 3, BYT_BLOK bit 2, T_LENGTH bits 1:0, the
//! ATA registers in bytes 3–14); ACS-4 §7.13 (IDENTIFY DEVICE, ECh), §7.45.6 and
//! §7.45.7 (SMART READ DATA, B0h/D0h, and READ THRESHOLDS, B0h/D1h: LBA Mid 4Fh, LBA
//! High C2h).

use std::fs::File;

use crate::sg::{self, SgError};

/// PIO Data-In (SAT-5 Table 142).
const PIO_DATA_IN: u8 = 4;
/// Commands that read a sector take at most this long (a drive spinning up).
const TIMEOUT_MS: u32 = 30_000;

/// The ATA registers of a command that reads one 512-byte sector.
struct Registers {
    command: u8,
    features: u8,
    lba_mid: u8,
    lba_high: u8,
}

/// ATA PASS-THROUGH (16) reading one sector in 512-byte blocks, the length in the
/// SECTOR COUNT field.
fn cdb(r: &Registers) -> [u8; 16] {
    let mut c = [0u8; 16];
    c[0] = 0x85;
    c[1] = PIO_DATA_IN << 1;
    // T_DIR from the device, BYT_BLOK blocks, T_LENGTH in SECTOR COUNT.
    c[2] = 0x08 | 0x04 | 0x02;
    c[4] = r.features;
    c[6] = 1;
    c[10] = r.lba_mid;
    c[12] = r.lba_high;
    c[14] = r.command;
    c
}

fn read_sector(file: &File, name: &'static str, r: &Registers) -> Result<[u8; 512], SgError> {
    let mut data = [0u8; 512];
    let (n, _) = sg::read(file, name, &cdb(r), &mut data, TIMEOUT_MS)?;
    if n < 512 {
        return Err(SgError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("{name}: {n} of 512 bytes"),
        )));
    }
    Ok(data)
}

/// IDENTIFY DEVICE (ECh): the 512 bytes of identify data.
///
/// Errors: [`SgError`] (a drive that is not ATA, or a bridge without SAT, refuses the
/// pass-through with ILLEGAL REQUEST).
pub fn identify_device(file: &File) -> Result<[u8; 512], SgError> {
    let r = Registers {
        command: 0xEC,
        features: 0,
        lba_mid: 0,
        lba_high: 0,
    };
    read_sector(file, "IDENTIFY DEVICE", &r)
}

/// SMART READ DATA (B0h, feature D0h): the attribute table and the offline data.
///
/// Errors: [`SgError`] (ABORTED COMMAND when SMART is disabled).
pub fn smart_read_data(file: &File) -> Result<[u8; 512], SgError> {
    let r = Registers {
        command: 0xB0,
        features: 0xD0,
        lba_mid: 0x4F,
        lba_high: 0xC2,
    };
    read_sector(file, "SMART READ DATA", &r)
}

/// SMART READ THRESHOLDS (B0h, feature D1h; obsolete in ACS-4 but answered by most
/// drives): the attributes' thresholds.
///
/// Errors: [`SgError`].
pub fn smart_read_thresholds(file: &File) -> Result<[u8; 512], SgError> {
    let r = Registers {
        command: 0xB0,
        features: 0xD1,
        lba_mid: 0x4F,
        lba_high: 0xC2,
    };
    read_sector(file, "SMART READ THRESHOLDS", &r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pass_through_carries_the_registers_where_sat_says() {
        let c = cdb(&Registers {
            command: 0xB0,
            features: 0xD0,
            lba_mid: 0x4F,
            lba_high: 0xC2,
        });
        assert_eq!(c[0], 0x85, "ATA PASS-THROUGH (16)");
        assert_eq!(c[1], 0x08, "PIO Data-In, no EXTEND");
        assert_eq!(
            c[2], 0x0E,
            "from the device, in blocks, length in SECTOR COUNT"
        );
        assert_eq!(
            (c[4], c[6], c[10], c[12], c[14]),
            (0xD0, 1, 0x4F, 0xC2, 0xB0)
        );
    }
}
