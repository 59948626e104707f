//! Host-built end-to-end protection information (`protection_information: host` and
//! `host_checked`, PRACT 0): the tuple of each logical block, built for writes and
//! checked for reads, and [`HostPi`], the metadata buffers the tuples travel in (one
//! region per ring slot, passed in `nvme_uring_cmd.metadata`). `commands::NvmeCommands`
//! owns a [`HostPi`]; `uring::complete` asks it to check completed reads.
//!
//! Formats (NVM Command Set Specification 1.0, §5.2.1 "Protection Information Formats";
//! big-endian fields): 16-bit guard, an 8-byte tuple: guard (CRC-16 T10-DIF over the
//! block's data), application tag (2 B), reference tag (4 B); 64-bit guard, a 16-byte
//! tuple: guard (CRC-64 NVMe), application tag (2 B), storage and reference tag (6 B;
//! no storage tag, so all 48 bits are the reference tag). The reference tag is the
//! block's LBA (types 1 and 2 check it; type 3 defines none and iogate stores the LBA
//! anyway). The application tag is 0 and checked with mask FFFFh. A tuple whose
//! application tag is FFFFh (and, for type 3, reference tag all ones) is not checked:
//! the spec's escape for blocks never written with PI. CRCs from the `crc` crate's
//! catalogue (`CRC_16_T10_DIF`, `CRC_64_NVME`).

use iogate_result::protection::{GuardFormat, ProtectionInfo};

/// Slice-by-16 tables: the host check runs on every block of every read.
const CRC16: crc::Crc<u16, crc::Table<16>> =
    crc::Crc::<u16, crc::Table<16>>::new(&crc::CRC_16_T10_DIF);
const CRC64: crc::Crc<u64, crc::Table<16>> =
    crc::Crc::<u64, crc::Table<16>>::new(&crc::CRC_64_NVME);

/// The application tag iogate writes (and the ELBAT it asks the controller to check).
pub const APPLICATION_TAG: u16 = 0;

/// The first field of a tuple that does not match its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiField {
    /// The guard is not the CRC of the block's data.
    Guard,
    /// The application tag is not [`APPLICATION_TAG`].
    ApplicationTag,
    /// The reference tag is not the block's LBA.
    ReferenceTag,
}

/// Bytes of the guard for `g`.
fn guard_bytes(g: GuardFormat) -> usize {
    match g {
        GuardFormat::Crc16 => 2,
        GuardFormat::Crc32c => 4,
        GuardFormat::Crc64 => 8,
    }
}

/// The guard of `data` in `g`'s format, big-endian in the low bytes of a u64.
fn guard(g: GuardFormat, data: &[u8]) -> u64 {
    match g {
        GuardFormat::Crc16 => u64::from(CRC16.checksum(data)),
        GuardFormat::Crc32c => u64::from(crc32c::crc32c(data)),
        GuardFormat::Crc64 => CRC64.checksum(data),
    }
}

/// Big-endian `value` into `out` (its low `out.len()` bytes).
fn put_be(out: &mut [u8], value: u64) {
    let n = out.len();
    for (i, b) in out.iter_mut().enumerate() {
        *b = (value >> (8 * (n - 1 - i))) as u8;
    }
}

fn get_be(b: &[u8]) -> u64 {
    b.iter().fold(0, |v, &x| (v << 8) | u64::from(x))
}

/// Writes the tuple of the block `data` at `lba` into `tuple` (the format's tuple bytes).
pub fn build(info: &ProtectionInfo, data: &[u8], lba: u64, tuple: &mut [u8]) {
    let gb = guard_bytes(info.guard);
    put_be(&mut tuple[..gb], guard(info.guard, data));
    put_be(&mut tuple[gb..gb + 2], u64::from(APPLICATION_TAG));
    let reference = &mut tuple[gb + 2..];
    put_be(reference, lba & reference_mask(info.guard));
}

/// The reference tag's bits: 32 with a 16-bit guard, 48 with a 64-bit one, 64 (of 80)
/// with CRC-32C.
fn reference_mask(g: GuardFormat) -> u64 {
    match g.reference_tag_bits() {
        b if b >= 64 => u64::MAX,
        b => (1 << b) - 1,
    }
}

/// Checks `tuple` against the block `data` at `lba`: None when it matches or is escaped.
pub fn check(info: &ProtectionInfo, data: &[u8], lba: u64, tuple: &[u8]) -> Option<PiField> {
    let gb = guard_bytes(info.guard);
    let app = get_be(&tuple[gb..gb + 2]) as u16;
    let reference = get_be(&tuple[gb + 2..]);
    let all_ones = reference == get_be(&vec![0xff; tuple.len() - gb - 2]);
    if app == 0xffff && (info.pi_type != 3 || all_ones) {
        return None;
    }
    if get_be(&tuple[..gb]) != guard(info.guard, data) {
        return Some(PiField::Guard);
    }
    if app != APPLICATION_TAG {
        return Some(PiField::ApplicationTag);
    }
    if info.pi_type != 3 && reference != lba & reference_mask(info.guard) {
        return Some(PiField::ReferenceTag);
    }
    None
}

/// The metadata buffers of one job's ring: `slots` regions of `per_slot` bytes, each
/// holding the tuples of the request in that slot (one per logical block).
pub struct HostPi {
    /// The namespace's format.
    pub info: ProtectionInfo,
    /// Reads are checked on the host (`host_checked`), not by the controller.
    pub check_reads: bool,
    buf: Vec<u8>,
    per_slot: usize,
    lba_bytes: usize,
}

impl HostPi {
    /// Buffers for `slots` requests of at most `max_bytes` each on `lba_bytes` blocks.
    pub fn new(
        info: ProtectionInfo,
        check_reads: bool,
        slots: usize,
        max_bytes: usize,
        lba_bytes: usize,
    ) -> HostPi {
        let per_slot = max_bytes / lba_bytes * usize::from(info.guard.tuple_bytes());
        HostPi {
            info,
            check_reads,
            buf: vec![0; per_slot * slots],
            per_slot,
            lba_bytes,
        }
    }

    /// The metadata of `slot` for a request of `len` bytes: its address and length.
    pub fn region(&mut self, slot: u16, len: u32) -> (*mut u8, u32) {
        let n = len as usize / self.lba_bytes * usize::from(self.info.guard.tuple_bytes());
        let r = &mut self.buf[usize::from(slot) * self.per_slot..][..n];
        (r.as_mut_ptr(), n as u32)
    }

    /// Builds the tuples of a write of `data` from `slba` into `slot`'s region.
    pub fn build_write(&mut self, slot: u16, slba: u64, data: &[u8]) {
        let (t, lbs) = (usize::from(self.info.guard.tuple_bytes()), self.lba_bytes);
        let info = self.info;
        let r = &mut self.buf[usize::from(slot) * self.per_slot..];
        for (i, (block, tuple)) in data
            .chunks_exact(lbs)
            .zip(r.chunks_exact_mut(t))
            .enumerate()
        {
            build(&info, block, slba + i as u64, tuple);
        }
    }

    /// Checks a completed read of `data` from `slba` against `slot`'s tuples: the
    /// blocks checked, and the first mismatch with its block's index.
    pub fn check_read(&self, slot: u16, slba: u64, data: &[u8]) -> (u64, Option<(u64, PiField)>) {
        let (t, lbs) = (usize::from(self.info.guard.tuple_bytes()), self.lba_bytes);
        let r = &self.buf[usize::from(slot) * self.per_slot..];
        let mut checked = 0;
        for (i, (block, tuple)) in data.chunks_exact(lbs).zip(r.chunks_exact(t)).enumerate() {
            checked += 1;
            if let Some(f) = check(&self.info, block, slba + i as u64, tuple) {
                return (checked, Some((i as u64, f)));
            }
        }
        (checked, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iogate_result::protection::{MetadataTransfer, PiLocation};

    fn info(pi_type: u8, guard: GuardFormat) -> ProtectionInfo {
        ProtectionInfo {
            pi_type,
            location: PiLocation::Last,
            metadata: MetadataTransfer::Separate,
            guard,
        }
    }

    #[test]
    fn catalogue_crcs_match_their_check_values() {
        // "123456789": CRC-16/T10-DIF D0DBh, CRC-64/NVME AE8B14860A799888h.
        assert_eq!(CRC16.checksum(b"123456789"), 0xd0db);
        assert_eq!(CRC64.checksum(b"123456789"), 0xae8b_1486_0a79_9888);
    }

    #[test]
    fn tuples_are_big_endian_and_every_field_is_checked() {
        let data: Vec<u8> = (0..512u32).map(|i| (i * 7) as u8).collect();
        let i16 = info(1, GuardFormat::Crc16);
        let mut t = [0u8; 8];
        build(&i16, &data, 0x0012_3456_789a, &mut t);
        assert_eq!(get_be(&t[..2]), u64::from(CRC16.checksum(&data)));
        assert_eq!(
            &t[2..],
            &[0, 0, 0x34, 0x56, 0x78, 0x9a],
            "app 0, ref = LBA low 32"
        );
        assert_eq!(check(&i16, &data, 0x0012_3456_789a, &t), None);
        let mut bad = data.clone();
        bad[100] ^= 1;
        assert_eq!(
            check(&i16, &bad, 0x0012_3456_789a, &t),
            Some(PiField::Guard)
        );
        assert_eq!(check(&i16, &data, 7, &t), Some(PiField::ReferenceTag));
        let t3 = info(3, GuardFormat::Crc16);
        assert_eq!(
            check(&t3, &data, 7, &t),
            None,
            "type 3 has no reference tag"
        );
        let mut app = t;
        app[3] = 1;
        assert_eq!(
            check(&i16, &data, 0x0012_3456_789a, &app),
            Some(PiField::ApplicationTag)
        );
        app[2..4].copy_from_slice(&[0xff, 0xff]);
        assert_eq!(
            check(&i16, &bad, 1, &app),
            None,
            "application tag FFFFh: escaped"
        );
        assert_eq!(
            check(&t3, &bad, 1, &app),
            Some(PiField::Guard),
            "type 3 needs both"
        );
        let i64 = info(1, GuardFormat::Crc64);
        let mut t = [0u8; 16];
        build(&i64, &data, 0xabcd_0000_0000_0001, &mut t);
        assert_eq!(get_be(&t[..8]), CRC64.checksum(&data));
        assert_eq!(&t[8..], &[0, 0, 0, 0, 0, 0, 0, 1], "48-bit reference tag");
        assert_eq!(check(&i64, &data, 0xabcd_0000_0000_0001, &t), None);
    }

    #[test]
    fn a_slot_region_holds_one_tuple_per_block() {
        let mut h = HostPi::new(info(1, GuardFormat::Crc16), true, 4, 8192, 512);
        let data = vec![9u8; 4096];
        h.build_write(2, 100, &data);
        let (_, len) = h.region(2, 4096);
        assert_eq!(len, 64);
        assert_eq!(h.check_read(2, 100, &data), (8, None));
        assert_eq!(
            h.check_read(2, 101, &data),
            (1, Some((0, PiField::ReferenceTag)))
        );
        let mut bad = data.clone();
        bad[3 * 512] ^= 1;
        assert_eq!(h.check_read(2, 100, &bad), (4, Some((3, PiField::Guard))));
    }
}
