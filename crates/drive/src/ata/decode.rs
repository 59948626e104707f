//! Decoding of ATA IDENTIFY DEVICE data and SMART READ DATA / SMART READ THRESHOLDS into
//! the `iogate_result::disk` types: pure functions over the 512-byte data structures,
//! no I/O. Child of `ata`, whose commands read these structures through SG_IO (ATA
//! PASS-THROUGH (16)); every function here takes any 512 bytes without panicking, so a
//! drive or bridge that answers garbage yields odd figures, never a crash.
//!
//! Sources: ATA/ATAPI Command Set - 4 (ACS-4) §7.13.6 (IDENTIFY DEVICE data, Table 45;
//! the integrity word §7.13.6.107), §7.45 (SMART, READ DATA §7.45.6); the attribute
//! table's 12-byte entries as SFF-8035i laid them out and every drive still fills them;
//! the attributes' names as smartmontools prints them (`smartctl -A`, `drivedb.h`
//! defaults). Words are little-endian; ATA strings hold the first character of each pair
//! in the high byte of its word.

use iogate_result::disk::{
    AtaIdentity, AtaSanitize, AtaSecurity, AtaSmartSupport, DiskHealthDetail, DiskHealthSample,
    Rotation, SmartAttribute,
};

/// Largest logical or physical sector size believed, bytes (1 MiB).
const MAX_SECTOR_BYTES: u32 = 1 << 20;
/// Entries in the SMART attribute table.
const SMART_ENTRIES: usize = 30;
/// Size of one attribute table entry, bytes.
const SMART_ENTRY_BYTES: usize = 12;
/// Offset of the first attribute table entry (after the revision word).
const SMART_TABLE_OFFSET: usize = 2;
/// Offset past the last entry (then offline data collection, self-test, checksum).
const SMART_TABLE_END: usize = SMART_TABLE_OFFSET + SMART_ENTRIES * SMART_ENTRY_BYTES;

/// IDENTIFY DEVICE data (512 bytes, 256 little-endian words, ACS-4 §7.13.6 Table 45)
/// decoded: strings trimmed, capacity in bytes (logical sectors × logical sector size,
/// saturating), sector sizes in bytes, erase times in minutes.
pub fn identify(data: &[u8; 512]) -> AtaIdentity {
    let w82 = feature_word(data, 82);
    let w83 = feature_word(data, 83);
    let w85 = feature_word(data, 85);
    let (logical, physical) = sector_sizes(data);
    let capacity_bytes = user_lbas(data, w83).saturating_mul(u64::from(logical));
    AtaIdentity {
        model: ata_string(data, 27, 20),
        serial: ata_string(data, 10, 10),
        firmware_revision: ata_string(data, 23, 4),
        capacity_bytes,
        logical_block_size_bytes: logical,
        physical_block_size_bytes: physical,
        rotation: rotation(word(data, 217)),
        form_factor: form_factor(word(data, 168)).map(String::from),
        trim: word(data, 169) & 1 != 0,
        sanitize: sanitize(word(data, 59)),
        security: security(data, w82),
        smart: AtaSmartSupport {
            supported: w82 & 1 != 0,
            enabled: w85 & 1 != 0,
        },
    }
}

/// The attribute table of SMART READ DATA (512 bytes, ACS-4 §7.45.6: 30 entries of 12
/// bytes from byte 2), in the drive's order with empty entries (ID 0) left out, each with
/// its threshold from SMART READ THRESHOLDS (same layout: ID, threshold) matched by ID
/// when `thresholds` was read.
pub fn smart_attributes(data: &[u8; 512], thresholds: Option<&[u8; 512]>) -> Vec<SmartAttribute> {
    let mut attributes = Vec::new();
    for entry in table_entries(data) {
        let id = entry[0];
        if id == 0 {
            continue;
        }
        let flags = u16::from_le_bytes([entry[1], entry[2]]);
        let value = entry[3];
        let mut raw = [0u8; 8];
        raw[..6].copy_from_slice(&entry[5..11]);
        let threshold = thresholds.and_then(|t| threshold_of(t, id));
        attributes.push(SmartAttribute {
            id,
            name: attribute_name(id).map(String::from),
            value,
            worst: entry[4],
            threshold,
            raw: u64::from_le_bytes(raw),
            prefailure: flags & 1 != 0,
            failing: matches!(threshold, Some(t) if t > 0 && value <= t),
        });
    }
    attributes
}

/// The name smartmontools prints for attribute `id` (`Reallocated_Sector_Ct`), for the
/// common IDs whose meaning most vendors share; None for the others.
pub fn attribute_name(id: u8) -> Option<&'static str> {
    Some(match id {
        1 => "Raw_Read_Error_Rate",
        2 => "Throughput_Performance",
        3 => "Spin_Up_Time",
        4 => "Start_Stop_Count",
        5 => "Reallocated_Sector_Ct",
        7 => "Seek_Error_Rate",
        8 => "Seek_Time_Performance",
        9 => "Power_On_Hours",
        10 => "Spin_Retry_Count",
        11 => "Calibration_Retry_Count",
        12 => "Power_Cycle_Count",
        170 | 232 => "Available_Reservd_Space",
        171 => "Program_Fail_Count",
        172 => "Erase_Fail_Count",
        173 | 177 => "Wear_Leveling_Count",
        174 => "Unexpect_Power_Loss_Ct",
        181 => "Program_Fail_Cnt_Total",
        182 => "Erase_Fail_Count_Total",
        183 => "Runtime_Bad_Block",
        184 => "End-to-End_Error",
        187 => "Reported_Uncorrect",
        188 => "Command_Timeout",
        189 => "High_Fly_Writes",
        190 => "Airflow_Temperature_Cel",
        191 => "G-Sense_Error_Rate",
        192 => "Power-Off_Retract_Count",
        193 => "Load_Cycle_Count",
        194 => "Temperature_Celsius",
        195 => "Hardware_ECC_Recovered",
        196 => "Reallocated_Event_Count",
        197 => "Current_Pending_Sector",
        198 => "Offline_Uncorrectable",
        199 => "UDMA_CRC_Error_Count",
        200 => "Multi_Zone_Error_Rate",
        231 => "SSD_Life_Left",
        233 => "Media_Wearout_Indicator",
        241 => "Total_LBAs_Written",
        242 => "Total_LBAs_Read",
        _ => return None,
    })
}

/// The health sample SMART attributes give: temperature in °C (194 Temperature_Celsius,
/// else 190 Airflow_Temperature_Cel: raw byte 0, the first of them giving 1–150 °C),
/// power-on hours (9: raw bytes 3:0), media errors (187 Reported_Uncorrect, else 198
/// Offline_Uncorrectable: raw bytes 5:0), and the attributes as [`DiskHealthDetail::Ata`].
pub fn health_sample(attributes: Vec<SmartAttribute>) -> DiskHealthSample {
    let raw_of = |id: u8| attributes.iter().find(|a| a.id == id).map(|a| a.raw);
    let temperature_c = [194, 190].into_iter().find_map(|id| {
        raw_of(id)
            .map(|raw| raw.to_le_bytes()[0])
            .filter(|&t| (1..=150).contains(&t))
    });
    let power_on_hours = raw_of(9).map(|raw| raw & 0xFFFF_FFFF);
    let media_errors = raw_of(187)
        .or_else(|| raw_of(198))
        .map(|raw| raw & 0xFFFF_FFFF_FFFF);
    DiskHealthSample {
        temperature_c,
        power_on_hours,
        media_errors,
        detail: DiskHealthDetail::Ata { attributes },
    }
}

/// True when IDENTIFY DEVICE data's integrity word (word 255) is valid or absent: when its
/// low byte (byte 510) is A5h, the checksum byte (byte 511) must make the sum of all 512
/// bytes 0 mod 256 (ACS-4 §7.13.6.107); any other signature means no checksum was given.
pub fn identify_checksum_ok(data: &[u8; 512]) -> bool {
    data[510] != 0xA5 || byte_sum(data) == 0
}

/// True when SMART READ DATA's (or READ THRESHOLDS') checksum is valid: byte 511 makes the
/// sum of all 512 bytes 0 mod 256 (ACS-4 §7.45.6, the device SMART data structure).
pub fn smart_checksum_ok(data: &[u8; 512]) -> bool {
    byte_sum(data) == 0
}

/// Sum of all bytes mod 256.
fn byte_sum(data: &[u8; 512]) -> u8 {
    data.iter().fold(0u8, |acc, &b| acc.wrapping_add(b))
}

/// Word `n` (little-endian); 0 past the end.
fn word(data: &[u8; 512], n: usize) -> u16 {
    let byte = |i: usize| data.get(i).map_or(0, |&b| b);
    let i = n.saturating_mul(2);
    u16::from_le_bytes([byte(i), byte(i.saturating_add(1))])
}

/// A feature word (82, 83, 85): 0000h and FFFFh mean it is not reported, its bits 0.
fn feature_word(data: &[u8; 512], n: usize) -> u16 {
    match word(data, n) {
        0xFFFF => 0,
        w => w,
    }
}

/// The ATA string in `count` words from word `first`: pairs swapped (first character in
/// the high byte), spaces and NULs trimmed at both ends, other non-printable bytes '?'.
fn ata_string(data: &[u8; 512], first: usize, count: usize) -> String {
    let text: String = (first..first.saturating_add(count))
        .flat_map(|n| word(data, n).to_be_bytes())
        .map(|b| match b {
            0 => '\0',
            b' '..=b'~' => char::from(b),
            _ => '?',
        })
        .collect();
    text.trim_matches([' ', '\0']).replace('\0', "?")
}

/// User addressable logical sectors: words 100–103 when the 48-bit address feature set is
/// supported (word 83 bit 10) and they are non-zero, else words 60–61.
fn user_lbas(data: &[u8; 512], w83: u16) -> u64 {
    let lba48 = (100..104)
        .rev()
        .fold(0u64, |acc, n| (acc << 16) | u64::from(word(data, n)));
    if w83 & (1 << 10) != 0 && lba48 != 0 {
        lba48
    } else {
        u64::from(word(data, 60)) | (u64::from(word(data, 61)) << 16)
    }
}

/// (Logical, physical) sector sizes in bytes from word 106 (valid when bits 15:14 are
/// 01b) and words 117–118; absurd values fall back to 512 and to physical = logical.
fn sector_sizes(data: &[u8; 512]) -> (u32, u32) {
    let w106 = word(data, 106);
    if w106 & 0xC000 != 0x4000 {
        return (512, 512);
    }
    let mut logical: u32 = 512;
    if w106 & (1 << 12) != 0 {
        let words = u32::from(word(data, 117)) | (u32::from(word(data, 118)) << 16);
        let bytes = words.checked_mul(2);
        if let Some(bytes) = bytes.filter(|&b| b != 0 && b % 512 == 0 && b <= MAX_SECTOR_BYTES) {
            logical = bytes;
        }
    }
    let mut physical = logical;
    if w106 & (1 << 13) != 0 {
        // Bits 3:0: at most 15, so the factor fits; the product may not.
        let bytes = logical.checked_mul(1 << (w106 & 0xF));
        if let Some(bytes) = bytes.filter(|&b| b <= MAX_SECTOR_BYTES) {
            physical = bytes;
        }
    }
    (logical, physical)
}

/// Nominal media rotation rate (word 217).
fn rotation(w217: u16) -> Rotation {
    match w217 {
        0x0001 => Rotation::SolidState,
        0x0401..=0xFFFE => Rotation::Rpm { rpm: w217 },
        _ => Rotation::NotReported,
    }
}

/// Nominal form factor (word 168 bits 3:0); None when not reported or reserved.
fn form_factor(w168: u16) -> Option<&'static str> {
    Some(match w168 & 0xF {
        1 => "5.25\"",
        2 => "3.5\"",
        3 => "2.5\"",
        4 => "1.8\"",
        5 => "less than 1.8\"",
        6 => "mSATA",
        7 => "M.2",
        8 => "MicroSSD",
        9 => "CFast",
        _ => return None,
    })
}

/// The SANITIZE feature set (word 59 bits 15:12).
fn sanitize(w59: u16) -> AtaSanitize {
    AtaSanitize {
        supported: w59 & (1 << 12) != 0,
        crypto_scramble: w59 & (1 << 13) != 0,
        overwrite: w59 & (1 << 14) != 0,
        block_erase: w59 & (1 << 15) != 0,
    }
}

/// The Security feature set: support from word 82 bit 1, state from word 128, erase
/// times from words 89 and 90.
fn security(data: &[u8; 512], w82: u16) -> AtaSecurity {
    let w128 = word(data, 128);
    AtaSecurity {
        supported: w82 & (1 << 1) != 0,
        enabled: w128 & (1 << 1) != 0,
        locked: w128 & (1 << 2) != 0,
        frozen: w128 & (1 << 3) != 0,
        enhanced_erase: w128 & (1 << 5) != 0,
        erase_time_min: erase_time_min(word(data, 89)),
        enhanced_erase_time_min: erase_time_min(word(data, 90)),
    }
}

/// A security erase time (word 89 or 90), minutes. Bit 15 set: extended format, bits 14:0
/// × 2 minutes (7FFFh: more than 65,532, reported as 65,532); else bits 7:0 × 2 minutes
/// (FFh: more than 508, reported as 508). A count of 0: not reported.
fn erase_time_min(w: u16) -> Option<u32> {
    let (count, max) = if w & 0x8000 != 0 {
        (u32::from(w & 0x7FFF), 0x7FFE)
    } else {
        (u32::from(w & 0xFF), 0xFE)
    };
    (count != 0).then(|| count.min(max).saturating_mul(2))
}

/// The 30 attribute table entries of a SMART READ DATA / THRESHOLDS structure.
fn table_entries(data: &[u8; 512]) -> impl Iterator<Item = &[u8]> {
    data[SMART_TABLE_OFFSET..SMART_TABLE_END].chunks_exact(SMART_ENTRY_BYTES)
}

/// The threshold of attribute `id` in SMART READ THRESHOLDS (the first entry with its ID).
fn threshold_of(thresholds: &[u8; 512], id: u8) -> Option<u8> {
    table_entries(thresholds).find(|e| e[0] == id).map(|e| e[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Puts word `n` (little-endian) in a page.
    fn put_word(page: &mut [u8; 512], n: usize, w: u16) {
        page[2 * n..2 * n + 2].copy_from_slice(&w.to_le_bytes());
    }

    /// Puts an ATA string (space-padded, first character in the high byte) from word `first`.
    fn put_string(page: &mut [u8; 512], first: usize, count: usize, s: &str) {
        let mut bytes = s.as_bytes().to_vec();
        bytes.resize(count * 2, b' ');
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            put_word(page, first + i, u16::from_be_bytes([pair[0], pair[1]]));
        }
    }

    /// Puts a count of `words` words from word `first` (least significant word first).
    fn put_count(page: &mut [u8; 512], first: usize, words: usize, value: u64) {
        for i in 0..words {
            put_word(page, first + i, (value >> (16 * i)) as u16);
        }
    }

    /// Model, serial, firmware revision.
    fn strings(id: &AtaIdentity) -> [&str; 3] {
        [&id.model, &id.serial, &id.firmware_revision]
    }

    /// Logical and physical sector sizes.
    fn sizes(id: &AtaIdentity) -> (u32, u32) {
        (id.logical_block_size_bytes, id.physical_block_size_bytes)
    }

    /// Sets byte 511 so that all 512 bytes sum to 0 mod 256.
    fn seal(page: &mut [u8; 512]) {
        page[511] = 0;
        page[511] = 0u8.wrapping_sub(byte_sum(page));
    }

    /// A client SATA SSD: 1 TB, 512 logical / 4 KiB physical, M.2, frozen security.
    fn ssd_page() -> [u8; 512] {
        let mut p = [0u8; 512];
        put_string(&mut p, 10, 10, "S6PTNM0R123456A");
        put_string(&mut p, 23, 4, "SVT02B6Q");
        put_string(&mut p, 27, 20, "Samsung SSD 870 EVO 1TB");
        put_word(&mut p, 59, 0xB110); // SANITIZE: block erase, crypto scramble; mult 16
        put_count(&mut p, 60, 2, 0x0FFF_FFFF);
        put_word(&mut p, 82, 0x746B); // SMART, Security, …
        put_word(&mut p, 83, 0x7D61); // 48-bit addresses (bit 10)
        put_word(&mut p, 85, 0x7469); // SMART enabled
        put_word(&mut p, 89, 0x0002); // 4 minutes
        put_word(&mut p, 90, 0x8004); // extended format: 8 minutes
        put_count(&mut p, 100, 4, 1_953_525_168);
        put_word(&mut p, 106, 0x6003); // 2^3 logical sectors per physical
        put_word(&mut p, 128, 0x0029); // supported, frozen, enhanced erase
        put_word(&mut p, 168, 0x0007); // M.2
        put_word(&mut p, 169, 0x0001); // TRIM
        put_word(&mut p, 217, 0x0001); // non-rotating
        p[510] = 0xA5;
        seal(&mut p);
        p
    }

    #[test]
    fn ssd_identity() {
        let p = ssd_page();
        // The first character of a pair is in the high byte: "S6" is byte 21 then 20.
        assert_eq!((p[20], p[21]), (b'6', b'S'));
        let id = identify(&p);
        let names = ["Samsung SSD 870 EVO 1TB", "S6PTNM0R123456A", "SVT02B6Q"];
        assert_eq!(strings(&id), names);
        assert_eq!(id.capacity_bytes, 1_953_525_168 * 512);
        assert_eq!(sizes(&id), (512, 4096));
        assert_eq!(id.rotation, Rotation::SolidState);
        assert_eq!(id.form_factor.as_deref(), Some("M.2"));
        assert!(id.trim);
        let s = id.sanitize;
        assert!(s.supported && s.crypto_scramble && !s.overwrite && s.block_erase);
        let s = id.security;
        assert!(s.supported && !s.enabled && !s.locked && s.frozen && s.enhanced_erase);
        assert_eq!(s.erase_time_min, Some(4));
        assert_eq!(s.enhanced_erase_time_min, Some(8));
        assert!(id.smart.supported && id.smart.enabled);
        assert!(identify_checksum_ok(&p));
        let mut bad = p;
        bad[100] ^= 0x10;
        assert!(!identify_checksum_ok(&bad));
        bad[510] = 0x00; // no signature: not checked
        assert!(identify_checksum_ok(&bad));
    }

    #[test]
    fn hdd_4kn_identity() {
        let mut p = [0u8; 512];
        put_string(&mut p, 10, 10, "8HJ1ABCD");
        put_string(&mut p, 23, 4, "LEGNW9G0");
        put_string(&mut p, 27, 20, "HGST HUH721212ALN604");
        put_word(&mut p, 59, 0x5000); // SANITIZE: overwrite
        put_count(&mut p, 60, 2, 0x0FFF_FFFF);
        put_word(&mut p, 82, 0x746B);
        put_word(&mut p, 83, 0x7D61);
        put_word(&mut p, 85, 0x7468); // SMART supported, not enabled
        put_word(&mut p, 89, 0x00FF); // more than 508 minutes
        put_count(&mut p, 100, 4, 2_929_721_344);
        put_word(&mut p, 106, 0x5000); // logical sector longer than 256 words
        put_count(&mut p, 117, 2, 2048); // words per logical sector
        put_word(&mut p, 128, 0x0021);
        put_word(&mut p, 168, 0x0002); // 3.5"
        put_word(&mut p, 217, 7200);
        let id = identify(&p);
        assert_eq!(
            strings(&id),
            ["HGST HUH721212ALN604", "8HJ1ABCD", "LEGNW9G0"]
        );
        assert_eq!(sizes(&id), (4096, 4096));
        assert_eq!(id.capacity_bytes, 2_929_721_344 * 4096);
        assert_eq!(id.rotation, Rotation::Rpm { rpm: 7200 });
        assert_eq!(id.form_factor.as_deref(), Some("3.5\""));
        assert!(!id.trim);
        assert!(id.sanitize.supported && id.sanitize.overwrite);
        assert!(!id.sanitize.block_erase && !id.sanitize.crypto_scramble);
        assert!(id.security.supported && id.security.enhanced_erase && !id.security.frozen);
        assert_eq!(id.security.erase_time_min, Some(508));
        assert_eq!(id.security.enhanced_erase_time_min, None);
        assert!(id.smart.supported && !id.smart.enabled);
        // No integrity word: nothing to check.
        assert!(identify_checksum_ok(&p));
    }

    /// QEMU's ide-hd (hw/ide/core.c `ide_identify`), 16 GiB, default properties.
    #[test]
    fn qemu_identity() {
        let mut p = [0u8; 512];
        put_string(&mut p, 10, 10, "QM00001");
        put_string(&mut p, 23, 4, "2.5+");
        put_string(&mut p, 27, 20, "QEMU HARDDISK");
        put_word(&mut p, 59, 0x0110);
        put_count(&mut p, 60, 2, 33_554_432);
        put_word(&mut p, 82, 0x4021); // NOP, write cache, SMART
        put_word(&mut p, 83, 0x7400); // FLUSH CACHE (EXT), 48-bit
        put_word(&mut p, 85, 0x4021);
        put_count(&mut p, 100, 4, 33_554_432);
        put_word(&mut p, 106, 0x6000);
        let id = identify(&p);
        assert_eq!(strings(&id), ["QEMU HARDDISK", "QM00001", "2.5+"]);
        assert_eq!(id.capacity_bytes, 16 << 30);
        assert_eq!(sizes(&id), (512, 512));
        assert_eq!(id.rotation, Rotation::NotReported);
        assert_eq!(id.form_factor, None);
        assert!(!id.trim);
        assert!(!id.sanitize.supported);
        assert!(!id.security.supported);
        assert_eq!(id.security.erase_time_min, None);
        assert!(id.smart.supported && id.smart.enabled);
        assert!(identify_checksum_ok(&p));
    }

    #[test]
    fn strings_trimmed_and_cleaned() {
        let mut p = [0u8; 512];
        // Model: leading spaces, NULs at the end, a control byte inside.
        put_word(&mut p, 27, 0x2020);
        put_word(&mut p, 28, 0x4107); // 'A', BEL
        put_word(&mut p, 29, 0x4220); // 'B', ' '
        put_word(&mut p, 30, 0x4300); // 'C', NUL
        assert_eq!(identify(&p).model, "A?B C");
        p[63] = 0x80;
        assert_eq!(identify(&p).model, "A?B C??"); // inner NUL, then 80h
        assert_eq!(identify(&p).serial, "");
    }

    #[test]
    fn capacity_and_sector_guards() {
        let mut p = [0u8; 512];
        put_count(&mut p, 60, 2, 1000);
        put_count(&mut p, 100, 4, 5000);
        // 48-bit count ignored without word 83 bit 10, and when zero.
        assert_eq!(identify(&p).capacity_bytes, 1000 * 512);
        put_word(&mut p, 83, 0x0400);
        assert_eq!(identify(&p).capacity_bytes, 5000 * 512);
        put_word(&mut p, 83, 0xFFFF); // not reported
        assert_eq!(identify(&p).capacity_bytes, 1000 * 512);
        put_word(&mut p, 83, 0x0400);
        put_count(&mut p, 100, 4, 0);
        assert_eq!(identify(&p).capacity_bytes, 1000 * 512);
        put_count(&mut p, 100, 4, u64::MAX);
        put_word(&mut p, 106, 0x5000);
        put_count(&mut p, 117, 2, 2048);
        assert_eq!(identify(&p).capacity_bytes, u64::MAX);
        for words in [0, 300, 0x0008_0001, 0xFFFF_FFFF] {
            put_count(&mut p, 117, 2, words);
            assert_eq!(sizes(&identify(&p)), (512, 512), "{words:#x}");
        }
        put_count(&mut p, 117, 2, 0x0008_0000); // 1 MiB: still believed
        assert_eq!(sizes(&identify(&p)), (1 << 20, 1 << 20));
        put_count(&mut p, 117, 2, 2048);
        put_word(&mut p, 106, 0x700F); // 4096 × 2^15 = 128 MiB physical
        assert_eq!(sizes(&identify(&p)), (4096, 4096));
        put_word(&mut p, 106, 0xF003); // bit 15 set: word 106 not valid
        assert_eq!(sizes(&identify(&p)), (512, 512));
        put_word(&mut p, 106, 0x2003); // bit 14 clear: not valid
        assert_eq!(sizes(&identify(&p)), (512, 512));
        // FFFFh feature words: nothing supported.
        put_word(&mut p, 82, 0xFFFF);
        put_word(&mut p, 85, 0xFFFF);
        let id = identify(&p);
        assert!(!id.smart.supported && !id.smart.enabled && !id.security.supported);
    }

    #[test]
    fn erase_times_rotation_form_factor() {
        // Minutes, 0 for None.
        let words = [0, 1, 0xFF, 0x100, 0x8000, 0x8001, 0x8100, 0xFFFF];
        let minutes = [0, 2, 508, 0, 0, 2, 512, 65_532];
        for (w, m) in words.into_iter().zip(minutes) {
            assert_eq!(erase_time_min(w), (m != 0).then_some(m), "word {w:#06x}");
        }
        for w in [0, 2, 0x0400, 0xFFFF] {
            assert_eq!(rotation(w), Rotation::NotReported);
        }
        assert_eq!(rotation(0x0401), Rotation::Rpm { rpm: 0x0401 });
        assert_eq!(rotation(0xFFFE), Rotation::Rpm { rpm: 0xFFFE });
        let names = ["5.25\"", "3.5\"", "2.5\"", "1.8\"", "less than 1.8\""];
        let names = names.iter().chain(&["mSATA", "M.2", "MicroSSD", "CFast"]);
        for (code, name) in (1u16..).zip(names) {
            assert_eq!(form_factor(0xFFF0 | code), Some(*name));
        }
        assert_eq!(form_factor(0), None);
        assert_eq!(form_factor(10), None);
        assert_eq!(form_factor(15), None);
    }

    /// Puts attribute table entry `slot`: ID, flags, value, worst, 6-byte raw.
    fn put_attribute(page: &mut [u8; 512], slot: usize, a: (u8, u16, u8, u8, u64)) {
        let e = 2 + 12 * slot;
        page[e] = a.0;
        page[e + 1..e + 3].copy_from_slice(&a.1.to_le_bytes());
        (page[e + 3], page[e + 4]) = (a.2, a.3);
        page[e + 5..e + 11].copy_from_slice(&a.4.to_le_bytes()[..6]);
    }

    /// A SMART READ DATA page and its thresholds (in another order).
    fn smart_pages() -> ([u8; 512], [u8; 512]) {
        let mut d = [0u8; 512];
        put_word(&mut d, 0, 0x0010);
        put_attribute(&mut d, 0, (1, 0x000F, 200, 200, 0));
        put_attribute(&mut d, 1, (5, 0x0033, 5, 5, 2000));
        put_attribute(&mut d, 2, (0, 0x0033, 100, 100, 77)); // empty entry
        put_attribute(&mut d, 3, (9, 0x0032, 97, 97, 0x0001_0000_2F1C));
        put_attribute(&mut d, 4, (194, 0x0022, 64, 45, 0x0028_0012_0024));
        put_attribute(&mut d, 5, (187, 0x0032, 100, 100, 3));
        put_attribute(&mut d, 6, (198, 0x0030, 100, 100, 7));
        put_attribute(&mut d, 7, (250, 0x0000, 100, 100, 0x0102_0304_0506));
        seal(&mut d);
        let mut t = [0u8; 512];
        let thresholds = [(194, 0), (9, 0), (250, 100), (5, 10), (1, 6), (187, 0)];
        for (slot, (id, threshold)) in thresholds.into_iter().enumerate() {
            (t[2 + 12 * slot], t[3 + 12 * slot]) = (id, threshold);
        }
        seal(&mut t);
        (d, t)
    }

    #[test]
    fn smart_table_with_thresholds() {
        let (d, t) = smart_pages();
        let a = smart_attributes(&d, Some(&t));
        let rows: Vec<_> = a
            .iter()
            .map(|a| (a.id, a.value, a.worst, a.threshold, a.raw))
            .collect();
        // The empty entry left out; thresholds matched by ID; none for 198.
        let expected = [
            (1, 200, 200, Some(6), 0),
            (5, 5, 5, Some(10), 2000),
            (9, 97, 97, Some(0), 0x0001_0000_2F1C),
            (194, 64, 45, Some(0), 0x0028_0012_0024),
            (187, 100, 100, Some(0), 3),
            (198, 100, 100, None, 7),
            (250, 100, 100, Some(100), 0x0102_0304_0506),
        ];
        assert_eq!(rows, expected);
        let prefailure: Vec<bool> = a.iter().map(|a| a.prefailure).collect();
        assert_eq!(prefailure, [true, true, false, false, false, false, false]);
        // 5 below its threshold and 250 at it fail.
        let failing: Vec<bool> = a.iter().map(|a| a.failing).collect();
        assert_eq!(failing, [false, true, false, false, false, false, true]);
        assert_eq!(a[1].name.as_deref(), Some("Reallocated_Sector_Ct"));
        assert_eq!(a[6].name, None);
        assert!(a.iter().all(|a| a.name.as_deref() == attribute_name(a.id)));
        let unread = smart_attributes(&d, None);
        assert!(unread.iter().all(|a| a.threshold.is_none() && !a.failing));
        assert_eq!(unread.len(), 7);
        assert!(smart_checksum_ok(&d) && smart_checksum_ok(&t));
        let mut bad = d;
        bad[511] = bad[511].wrapping_add(1);
        assert!(!smart_checksum_ok(&bad) && smart_checksum_ok(&[0u8; 512]));
    }

    #[test]
    fn names_of_common_attributes() {
        assert_eq!(attribute_name(177), Some("Wear_Leveling_Count"));
        assert_eq!(attribute_name(232), Some("Available_Reservd_Space"));
        assert_eq!(attribute_name(184), Some("End-to-End_Error"));
        assert_eq!(attribute_name(241), Some("Total_LBAs_Written"));
        assert_eq!(attribute_name(0), None);
        assert_eq!(attribute_name(255), None);
        let named = (0..=255u8)
            .filter(|&id| attribute_name(id).is_some())
            .count();
        assert_eq!(named, 40);
    }

    #[test]
    fn health_sample_fields() {
        let (d, t) = smart_pages();
        let attributes = smart_attributes(&d, Some(&t));
        let s = health_sample(attributes.clone());
        assert_eq!(s.temperature_c, Some(36));
        assert_eq!(s.power_on_hours, Some(0x2F1C));
        assert_eq!(s.media_errors, Some(3));
        assert_eq!(s.detail, DiskHealthDetail::Ata { attributes });
    }

    /// The health sample of a table holding these (ID, raw) attributes.
    fn sample(entries: &[(u8, u64)]) -> (Option<u8>, Option<u64>, Option<u64>) {
        let mut d = [0u8; 512];
        for (slot, &(id, raw)) in entries.iter().enumerate() {
            put_attribute(&mut d, slot, (id, 0, 100, 100, raw));
        }
        let s = health_sample(smart_attributes(&d, None));
        (s.temperature_c, s.power_on_hours, s.media_errors)
    }

    #[test]
    fn health_sample_fallbacks() {
        let s = sample(&[
            (190, 0x003C_1E2A),
            (198, 0xFF_0000_0007),
            (9, 0xFFFF_0000_0001),
        ]);
        assert_eq!(s, (Some(42), Some(1), Some(0xFF_0000_0007)));
        // 194 with a garbage byte 0: 190 gives it; alone: none; 187 before 198.
        assert_eq!(sample(&[(194, 0x00), (190, 0x21)]).0, Some(33));
        assert_eq!(sample(&[(194, 200)]).0, None);
        assert_eq!(sample(&[(198, 7), (187, 3)]).2, Some(3));
        assert_eq!(sample(&[]), (None, None, None));
    }

    #[test]
    fn garbage_never_panics() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut fill = |page: &mut [u8; 512]| {
            for chunk in page.chunks_exact_mut(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                chunk.copy_from_slice(&state.to_le_bytes());
            }
        };
        let (mut a, mut b) = ([0u8; 512], [0u8; 512]);
        for round in 0..4000 {
            fill(&mut a);
            fill(&mut b);
            if round % 4 == 0 {
                // Valid word 106 and 48-bit addresses more often than chance gives.
                a[213] = (a[213] & 0x3F) | 0x40;
                a[167] |= 0x04;
            }
            let id = identify(&a);
            assert!(id.logical_block_size_bytes >= 512);
            assert!(id.physical_block_size_bytes >= id.logical_block_size_bytes);
            let attributes = smart_attributes(&a, (round % 2 == 0).then_some(&b));
            assert!(attributes.len() <= 30);
            let _ = health_sample(attributes);
        }
        for fill_byte in [0x00, 0xFF] {
            let page = [fill_byte; 512];
            let _ = identify(&page);
            let _ = health_sample(smart_attributes(&page, Some(&page)));
        }
    }
}
