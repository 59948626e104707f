//! What a SATA or SCSI/SAS drive says of itself and of its health, read through SG_IO by
//! the drive crate's `ata` and `scsi` modules (`result.json` → `target.disk`, and each
//! step's `disk_health` before and after): ATA IDENTIFY DEVICE and SMART READ DATA (with
//! the thresholds), SCSI INQUIRY with its VPD pages, READ CAPACITY (16) and LOG SENSE.
//! The figures that mean the same as NVMe's (temperature, power-on hours, media errors)
//! have the same names here; each is null where the drive does not report it.
//!
//! Sources: ATA/ATAPI Command Set - 4 (ACS-4) §7.13.6 (IDENTIFY DEVICE data, Table 45),
//! §7.45 (SMART); the attribute table's layout and the attributes' names as smartmontools
//! prints them (`smartctl -A`); SCSI Primary Commands - 5 (SPC-5) §6.7 (INQUIRY), §7.7
//! (VPD pages 80h, 83h), §7.3 (log pages 0Dh, 2Fh, 02h, 03h, 10h); SCSI Block Commands - 4
//! (SBC-4) §5.20 (READ CAPACITY (16)), §6.6.4 (Block Limits VPD page B0h), §6.6.2 (Block
//! Device Characteristics VPD page B1h).

use serde::{Deserialize, Serialize};

/// A SATA or SCSI drive's identity (`target.disk`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum DiskIdentity {
    /// An ATA drive, directly or behind a SCSI/ATA translation (ATA PASS-THROUGH (16)).
    Ata(AtaIdentity),
    /// A SCSI drive (SAS, a virtual SCSI disk, USB mass storage without SAT).
    Scsi(ScsiIdentity),
}

/// How fast the medium turns (ACS-4 IDENTIFY word 217; SBC-4 B1h bytes 5:4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Rotation {
    /// The drive does not say (0000h).
    NotReported,
    /// Non-rotating medium: a solid state drive (0001h).
    SolidState,
    /// Nominal rotation rate (0401h–FFFEh).
    Rpm {
        /// Revolutions per minute.
        rpm: u16,
    },
}

/// ATA IDENTIFY DEVICE, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AtaIdentity {
    /// Model number (words 27–46), trimmed.
    pub model: String,
    /// Serial number (words 10–19), trimmed.
    pub serial: String,
    /// Firmware revision (words 23–26), trimmed.
    pub firmware_revision: String,
    /// User addressable capacity: logical sectors (words 100–103, else 60–61) × the
    /// logical sector size, bytes.
    pub capacity_bytes: u64,
    /// Logical sector size (words 106, 117–118), bytes.
    pub logical_block_size_bytes: u32,
    /// Physical sector size (word 106 bits 3:0), bytes.
    pub physical_block_size_bytes: u32,
    /// Nominal media rotation rate (word 217).
    pub rotation: Rotation,
    /// Nominal form factor (word 168 bits 3:0): `3.5"`, `2.5"`, `M.2`, …; null when not
    /// reported.
    pub form_factor: Option<String>,
    /// DATA SET MANAGEMENT with TRIM supported (word 169 bit 0).
    pub trim: bool,
    /// The SANITIZE feature set (word 59 bits 15:12).
    pub sanitize: AtaSanitize,
    /// The Security feature set (words 82, 89, 90, 128).
    pub security: AtaSecurity,
    /// The SMART feature set supported (word 82 bit 0) and enabled (word 85 bit 0).
    pub smart: AtaSmartSupport,
}

/// Which SANITIZE commands an ATA drive supports (IDENTIFY word 59).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AtaSanitize {
    /// The feature set (bit 12).
    pub supported: bool,
    /// CRYPTO SCRAMBLE EXT (bit 13).
    pub crypto_scramble: bool,
    /// OVERWRITE EXT (bit 14).
    pub overwrite: bool,
    /// BLOCK ERASE EXT (bit 15).
    pub block_erase: bool,
}

/// The Security feature set's state (IDENTIFY words 82, 89, 90, 128).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AtaSecurity {
    /// Supported (word 82 bit 1).
    pub supported: bool,
    /// A user password is set (word 128 bit 1).
    pub enabled: bool,
    /// Locked (word 128 bit 2).
    pub locked: bool,
    /// Frozen: SECURITY ERASE UNIT is refused until a power cycle (word 128 bit 3).
    pub frozen: bool,
    /// Enhanced erase supported (word 128 bit 5).
    pub enhanced_erase: bool,
    /// Time a normal erase takes, minutes (word 89; null when not reported).
    pub erase_time_min: Option<u32>,
    /// Time an enhanced erase takes, minutes (word 90; null when not reported).
    pub enhanced_erase_time_min: Option<u32>,
}

/// Whether the SMART feature set is there and on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AtaSmartSupport {
    /// Word 82 bit 0.
    pub supported: bool,
    /// Word 85 bit 0.
    pub enabled: bool,
}

/// A SCSI drive's INQUIRY, VPD pages and capacity, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScsiIdentity {
    /// T10 vendor identification (standard INQUIRY bytes 15:8), trimmed.
    pub vendor: String,
    /// Product identification (bytes 31:16), trimmed.
    pub product: String,
    /// Product revision level (bytes 35:32), trimmed: the firmware revision.
    pub revision: String,
    /// Unit serial number (VPD 80h); null when the page is absent.
    pub serial: Option<String>,
    /// The logical unit's designators (VPD 83h, association 0): NAA as `naa.<hex>`,
    /// EUI-64 as `eui.<hex>`, T10 vendor ID and SCSI name strings as text.
    pub designators: Vec<String>,
    /// (Last LBA + 1) × logical block length (READ CAPACITY (16)), bytes.
    pub capacity_bytes: u64,
    /// Logical block length, bytes.
    pub logical_block_size_bytes: u32,
    /// Physical block size (logical × 2^LOGICAL BLOCKS PER PHYSICAL BLOCK EXPONENT), bytes.
    pub physical_block_size_bytes: u32,
    /// Logical block provisioning enabled (LBPME): the drive unmaps.
    pub thin_provisioned: bool,
    /// Medium rotation rate (VPD B1h); NotReported when the page is absent.
    pub rotation: Rotation,
    /// Nominal form factor (VPD B1h byte 7 bits 3:0); null when not reported.
    pub form_factor: Option<String>,
    /// The Block Limits VPD page (B0h); null when absent.
    pub block_limits: Option<ScsiBlockLimits>,
    /// The log pages the drive lists as supported (LOG SENSE page 00h), ascending.
    pub log_pages: Vec<u8>,
}

/// SBC-4 Block Limits (VPD B0h): 0 in a field means the drive states no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScsiBlockLimits {
    /// MAXIMUM TRANSFER LENGTH (bytes 11:8), logical blocks.
    pub max_transfer_blocks: u32,
    /// OPTIMAL TRANSFER LENGTH (bytes 15:12), logical blocks.
    pub optimal_transfer_blocks: u32,
    /// MAXIMUM UNMAP LBA COUNT (bytes 23:20), logical blocks.
    pub max_unmap_blocks: u32,
}

/// A drive's health at one moment, in the fields NVMe's log shares with ATA SMART and
/// SCSI log pages, and what the protocol gave in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiskHealthSample {
    /// Current temperature, °C (ATA attribute 194, else 190, raw byte 0; SCSI log page
    /// 0Dh parameter 0000h); null when not reported.
    pub temperature_c: Option<u8>,
    /// Power-on hours (ATA attribute 9, raw bytes 3:0); null when not reported (SCSI
    /// drives give it only in a self-test entry).
    pub power_on_hours: Option<u64>,
    /// Errors the drive could not correct (ATA attribute 187, else 198; SCSI log pages
    /// 03h + 02h parameter 0006h, total uncorrected read and write errors); null when
    /// not reported.
    pub media_errors: Option<u64>,
    /// The protocol's own figures.
    pub detail: DiskHealthDetail,
}

/// The protocol's health figures in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "protocol", rename_all = "snake_case")]
pub enum DiskHealthDetail {
    /// SMART READ DATA with SMART READ THRESHOLDS.
    Ata {
        /// The attribute table, in the drive's order (empty entries left out).
        attributes: Vec<SmartAttribute>,
    },
    /// The log pages read.
    Scsi(ScsiLogs),
}

/// One SMART attribute (the 12-byte entry of SMART READ DATA, and its threshold).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SmartAttribute {
    /// Attribute ID.
    pub id: u8,
    /// The name smartmontools prints for it (`Reallocated_Sector_Ct`); null for an ID
    /// without a common meaning.
    pub name: Option<String>,
    /// Normalised current value.
    pub value: u8,
    /// Worst normalised value seen.
    pub worst: u8,
    /// Threshold (SMART READ THRESHOLDS); null when the thresholds could not be read.
    pub threshold: Option<u8>,
    /// Raw value, 6 bytes little-endian.
    pub raw: u64,
    /// Pre-failure (flags bit 0) rather than advisory.
    pub prefailure: bool,
    /// The value is at or below a non-zero threshold: the drive predicts its failure.
    pub failing: bool,
}

/// The SCSI log pages a drive answered (each null when it lists no such page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScsiLogs {
    /// Temperature page (0Dh) parameter 0001h: the reference temperature, °C.
    pub reference_temperature_c: Option<u8>,
    /// Informational Exceptions page (2Fh) parameter 0000h: the additional sense code and
    /// qualifier of the latest exception (0, 0: none).
    pub informational_exception: Option<[u8; 2]>,
    /// Read Error Counters page (03h): total uncorrected errors (parameter 0006h).
    pub read_uncorrected: Option<u64>,
    /// Write Error Counters page (02h): total uncorrected errors (parameter 0006h).
    pub write_uncorrected: Option<u64>,
    /// Self-Test Results page (10h): the entries that hold a test, latest first.
    pub self_tests: Vec<ScsiSelfTest>,
}

/// One entry of the Self-Test Results log page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScsiSelfTest {
    /// SELF-TEST CODE (byte 4 bits 7:5).
    pub code: u8,
    /// SELF-TEST RESULTS (byte 4 bits 3:0): 0 completed without error.
    pub result: u8,
    /// ACCUMULATED POWER ON HOURS when it ran (bytes 7:6).
    pub power_on_hours: u16,
}

/// A drive's health before and after a step or a run (`disk_health`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DiskHealth {
    /// Before the first request.
    pub before: DiskHealthSample,
    /// After the last completion.
    pub after: DiskHealthSample,
}
