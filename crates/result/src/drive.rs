//! The NVMe drive as a result records it: Identify Controller and Namespace
//! ([`NvmeIdentity`]), the SMART / Health log ([`SmartLog`]) before and after a span
//! ([`Health`], with the figures assertions read) and its samples during a run
//! ([`HealthSample`]). The parsers decode the NVMe data structures' bytes; the runner's
//! `nvme` module issues the commands that return them.
//!
//! Offsets are those of the NVMe Base Specification 2.0: Identify Controller data
//! structure (figure 275), Identify Namespace (NVM Command Set spec 1.0, figure 97),
//! SMART / Health Information log page 02h (figure 207). Multi-byte fields are
//! little-endian.

use iogate_spec::metric::{FdpMetric, HealthMetric};
use serde::{Deserialize, Serialize};

/// The SMART log's data unit: 1000 units of 512 bytes (NVMe Base 2.0, figure 207,
/// "Data Units Written": reported in thousands of 512-byte units, rounded up).
pub const DATA_UNIT_BYTES: u64 = 512_000;

/// The controller's identity and capabilities (Identify Controller, CNS 01h; the active
/// firmware slot from log page 03h).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmeController {
    /// PCI vendor ID (VID, bytes 1:0).
    pub vendor_id: u16,
    /// Model number (MN, bytes 63:24), trimmed.
    pub model: String,
    /// Serial number (SN, bytes 23:4), trimmed.
    pub serial: String,
    /// Firmware revision (FR, bytes 71:64), trimmed.
    pub firmware_revision: String,
    /// The active firmware slot (log page 03h, AFI bits 2:0), 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_active_slot: Option<u8>,
    /// Firmware slots the controller has (FRMW bits 3:1).
    pub firmware_slots: u8,
    /// Format NVM supported (OACS bit 1).
    pub format_supported: bool,
    /// Sanitize actions supported (SANICAP bits 2:0).
    pub sanitize: SanitizeCapabilities,
    /// Format NVM attributes (FNA, byte 524).
    pub format_attributes: FormatAttributes,
    /// Warning composite temperature threshold (WCTEMP), kelvin; absent when 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning_temperature_k: Option<u16>,
    /// Critical composite temperature threshold (CCTEMP), kelvin; absent when 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_temperature_k: Option<u16>,
    /// Number of namespaces (NN, bytes 519:516).
    pub namespaces: u32,
    /// Atomic Write Unit Normal (AWUN, bytes 527:526, 0's based), logical blocks: the
    /// largest write the controller performs atomically with respect to other commands.
    #[serde(default = "one")]
    pub atomic_write_unit_normal_blocks: u32,
    /// Atomic Write Unit Power Fail (AWUPF, bytes 529:528, 0's based), logical blocks:
    /// the largest write that is either wholly old or wholly new after a power failure.
    #[serde(default = "one")]
    pub atomic_write_unit_power_fail_blocks: u32,
    /// Flexible Data Placement supported (CTRATT bit 19, FDPS).
    #[serde(default)]
    pub fdp_supported: bool,
    /// Optional NVM Command Support (ONCS, bytes 521:520): bit 1 Write Uncorrectable,
    /// bit 2 Dataset Management, bit 3 Write Zeroes, bit 7 Verify (NVMe Base 2.0).
    #[serde(default)]
    pub optional_nvm_commands: u16,
}

fn one() -> u32 {
    1
}

/// A namespace's own atomic write parameters (Identify Namespace, valid when NSFEAT
/// bit 1, NSABP, is set; NVM Command Set spec 1.0, figure 97). Sizes are logical
/// blocks (the 0's based fields plus one); a boundary size of 0 means no boundary.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct NamespaceAtomic {
    /// Namespace Atomic Write Unit Normal (NAWUN, bytes 35:34).
    pub write_unit_normal_blocks: u32,
    /// Namespace Atomic Write Unit Power Fail (NAWUPF, bytes 37:36).
    pub write_unit_power_fail_blocks: u32,
    /// Namespace Atomic Boundary Size Normal (NABSN, bytes 41:40).
    pub boundary_size_normal_blocks: u32,
    /// Namespace Atomic Boundary Offset (NABO, bytes 43:42), the first boundary's LBA.
    pub boundary_offset_blocks: u32,
    /// Namespace Atomic Boundary Size Power Fail (NABSPF, bytes 45:44).
    pub boundary_size_power_fail_blocks: u32,
}

/// SANICAP bits 2:0: which Sanitize actions the controller supports.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct SanitizeCapabilities {
    /// Crypto Erase (CES, bit 0).
    pub crypto_erase: bool,
    /// Block Erase (BES, bit 1).
    pub block_erase: bool,
    /// Overwrite (OWS, bit 2).
    pub overwrite: bool,
}

/// FNA bits 2:0: how Format NVM behaves.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FormatAttributes {
    /// A format applies to every namespace (bit 0).
    pub all_namespaces: bool,
    /// A secure erase applies to every namespace (bit 1).
    pub secure_erase_all_namespaces: bool,
    /// Cryptographic erase is supported as a Format secure erase (bit 2).
    pub crypto_erase: bool,
}

/// A namespace (Identify Namespace, CNS 00h).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmeNamespace {
    /// Namespace ID.
    pub nsid: u32,
    /// Namespace size in logical blocks (NSZE).
    pub size_blocks: u64,
    /// Namespace capacity in logical blocks (NCAP).
    pub capacity_blocks: u64,
    /// The LBA format in use (FLBAS bits 3:0, with bits 6:5 as its upper bits).
    pub lba_format: u8,
    /// Its logical block size, bytes (2^LBADS).
    pub lba_data_size_bytes: u32,
    /// Its metadata bytes per block (MS).
    pub metadata_bytes: u16,
    /// The namespace's own atomic write parameters, when it reports them (NSABP);
    /// otherwise the controller's AWUN and AWUPF apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic: Option<NamespaceAtomic>,
    /// Endurance group identifier (ENDGID, bytes 103:102): what FDP's log pages are
    /// scoped to; 0 when the controller reports none.
    #[serde(default)]
    pub endurance_group: u16,
    /// End-to-end protection information, when the namespace is formatted with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<crate::protection::ProtectionInfo>,
    /// The byte every position of a deallocated block reads as (DLFEAT, byte 33, bits
    /// 2:0: 001b 00h, 010b FFh); None when the namespace does not report one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deallocated_fill: Option<u8>,
}

impl NvmeIdentity {
    /// The atomic write unit across a power failure, bytes: the namespace's NAWUPF
    /// when it reports one, else the controller's AWUPF, times the logical block size
    /// (one block when the drive promises nothing more).
    pub fn power_fail_atomic_bytes(&self) -> u64 {
        let blocks = match self.namespace.atomic {
            Some(a) => a.write_unit_power_fail_blocks,
            None => self.controller.atomic_write_unit_power_fail_blocks,
        };
        u64::from(blocks.max(1)) * u64::from(self.namespace.lba_data_size_bytes)
    }
}

/// The SMART / Health Information log (log page 02h), controller-wide. Data units are
/// thousands of 512-byte units ([`DATA_UNIT_BYTES`]); temperatures in kelvin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SmartLog {
    /// Critical Warning (byte 0): bit 0 spare below threshold, 1 temperature, 2
    /// reliability degraded, 3 read-only, 4 volatile backup failed, 5 persistent memory
    /// read-only.
    pub critical_warning: u8,
    /// Composite Temperature (bytes 2:1), kelvin.
    pub temperature_k: u16,
    /// Available Spare (byte 3), percent.
    pub available_spare_pct: u8,
    /// Available Spare Threshold (byte 4), percent.
    pub available_spare_threshold_pct: u8,
    /// Percentage Used (byte 5): the vendor's estimate of life used, may exceed 100.
    pub percentage_used_pct: u8,
    /// Data Units Read (bytes 47:32), in [`DATA_UNIT_BYTES`].
    pub data_units_read: u64,
    /// Data Units Written (bytes 63:48), in [`DATA_UNIT_BYTES`].
    pub data_units_written: u64,
    /// Host Read Commands (bytes 79:64).
    pub host_read_commands: u64,
    /// Host Write Commands (bytes 95:80).
    pub host_write_commands: u64,
    /// Controller Busy Time (bytes 111:96), minutes.
    pub controller_busy_time_min: u64,
    /// Power Cycles (bytes 127:112).
    pub power_cycles: u64,
    /// Power On Hours (bytes 143:128).
    pub power_on_hours: u64,
    /// Unsafe Shutdowns (bytes 159:144).
    pub unsafe_shutdowns: u64,
    /// Media and Data Integrity Errors (bytes 175:160).
    pub media_errors: u64,
    /// Number of Error Information Log Entries (bytes 191:176).
    pub error_log_entries: u64,
    /// Warning Composite Temperature Time (bytes 195:192), minutes.
    pub warning_temperature_time_min: u32,
    /// Critical Composite Temperature Time (bytes 199:196), minutes.
    pub critical_temperature_time_min: u32,
    /// Thermal Management Temperature 1 and 2 Transition Counts (bytes 219:216, 223:220).
    pub thermal_transitions: [u32; 2],
    /// Total Time For Thermal Management Temperature 1 and 2 (bytes 227:224, 231:228), s.
    pub thermal_time_s: [u32; 2],
    /// The OCP Datacenter NVMe SSD specification's SMART / Health Information
    /// Extended log (C0h), where the controller has it (its GUID checked); read around
    /// steps, not in the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocp_smart: Option<crate::ocp::SmartExtended>,
    /// The OCP Latency Monitor log (C3h), where the controller has it (its GUID
    /// checked): the drive's own counts of commands per latency bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocp_latency_monitor: Option<crate::ocp::LatencyMonitor>,
    /// The endurance group's FDP Statistics (log page 22h), where the controller has FDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<crate::fdp::FdpStatistics>,
    /// The namespace's placement handles, reclaim unit handle usage and FDP event
    /// counts, where the controller has FDP and the namespace placement handles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::fdp::PlacementLog>,
}

fn le16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// A 128-bit counter, saturated to u64 (2^64 data units is 9.4 ZB).
fn le128(b: &[u8], at: usize) -> u64 {
    crate::le::saturated(b, at, 16)
}

/// An ASCII field, space-padded (and sometimes NUL-padded), trimmed.
fn ascii(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .trim_matches(|c: char| c == ' ' || c == '\0')
        .to_string()
}

impl NvmeController {
    /// Parses the 4096-byte Identify Controller data structure.
    pub fn parse(b: &[u8; 4096]) -> NvmeController {
        let sanicap = le32(b, 328);
        let fna = b[524];
        let temp = |at| Some(le16(b, at)).filter(|&t| t != 0);
        NvmeController {
            vendor_id: le16(b, 0),
            serial: ascii(&b[4..24]),
            model: ascii(&b[24..64]),
            firmware_revision: ascii(&b[64..72]),
            firmware_active_slot: None,
            firmware_slots: (b[260] >> 1) & 0x7,
            format_supported: le16(b, 256) & 0x2 != 0,
            sanitize: SanitizeCapabilities {
                crypto_erase: sanicap & 0x1 != 0,
                block_erase: sanicap & 0x2 != 0,
                overwrite: sanicap & 0x4 != 0,
            },
            format_attributes: FormatAttributes {
                all_namespaces: fna & 0x1 != 0,
                secure_erase_all_namespaces: fna & 0x2 != 0,
                crypto_erase: fna & 0x4 != 0,
            },
            warning_temperature_k: temp(266),
            critical_temperature_k: temp(268),
            namespaces: le32(b, 516),
            atomic_write_unit_normal_blocks: u32::from(le16(b, 526)) + 1,
            atomic_write_unit_power_fail_blocks: u32::from(le16(b, 528)) + 1,
            fdp_supported: le32(b, 96) & (1 << 19) != 0,
            optional_nvm_commands: le16(b, 520),
        }
    }
}

impl NvmeNamespace {
    /// Parses the 4096-byte Identify Namespace data structure of namespace `nsid`.
    pub fn parse(nsid: u32, b: &[u8; 4096]) -> NvmeNamespace {
        let flbas = b[26];
        let index = (flbas & 0xf) | ((flbas >> 5) & 0x3) << 4;
        let lbaf = le32(b, 128 + 4 * usize::from(index.min(63)));
        let lbads = ((lbaf >> 16) & 0xff) as u8;
        NvmeNamespace {
            nsid,
            size_blocks: le64(b, 0),
            capacity_blocks: le64(b, 8),
            lba_format: index,
            lba_data_size_bytes: if (9..32).contains(&lbads) {
                1 << lbads
            } else {
                0
            },
            metadata_bytes: (lbaf & 0xffff) as u16,
            atomic: (b[24] & 0x2 != 0).then(|| {
                let blocks = |at| u32::from(le16(b, at)) + 1;
                NamespaceAtomic {
                    write_unit_normal_blocks: blocks(34),
                    write_unit_power_fail_blocks: blocks(36),
                    boundary_size_normal_blocks: u32::from(le16(b, 40)),
                    boundary_offset_blocks: u32::from(le16(b, 42)),
                    boundary_size_power_fail_blocks: u32::from(le16(b, 44)),
                }
            }),
            endurance_group: le16(b, 102),
            protection: crate::protection::ProtectionInfo::parse(b[29], flbas),
            deallocated_fill: match b[33] & 0x7 {
                0b001 => Some(0x00),
                0b010 => Some(0xFF),
                _ => None,
            },
        }
    }
}

impl SmartLog {
    /// Parses the 512-byte SMART / Health Information log page.
    pub fn parse(b: &[u8; 512]) -> SmartLog {
        SmartLog {
            critical_warning: b[0],
            temperature_k: le16(b, 1),
            available_spare_pct: b[3],
            available_spare_threshold_pct: b[4],
            percentage_used_pct: b[5],
            data_units_read: le128(b, 32),
            data_units_written: le128(b, 48),
            host_read_commands: le128(b, 64),
            host_write_commands: le128(b, 80),
            controller_busy_time_min: le128(b, 96),
            power_cycles: le128(b, 112),
            power_on_hours: le128(b, 128),
            unsafe_shutdowns: le128(b, 144),
            media_errors: le128(b, 160),
            error_log_entries: le128(b, 176),
            warning_temperature_time_min: le32(b, 192),
            critical_temperature_time_min: le32(b, 196),
            thermal_transitions: [le32(b, 216), le32(b, 220)],
            thermal_time_s: [le32(b, 224), le32(b, 228)],
            ocp_smart: None,
            ocp_latency_monitor: None,
            fdp: None,
            placement: None,
        }
    }

    /// Composite temperature in degrees Celsius.
    pub fn temperature_c(&self) -> f64 {
        f64::from(self.temperature_k) - 273.15
    }
}

/// What the controller reports of itself, as kept in `result.json` (`target.nvme`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NvmeIdentity {
    /// Identify Controller.
    pub controller: NvmeController,
    /// Identify Namespace of the target's namespace.
    pub namespace: NvmeNamespace,
    /// The namespace's endurance group's FDP configuration (log page 20h), where the
    /// controller supports FDP and the log answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdp: Option<crate::fdp::FdpConfiguration>,
}

/// The SMART / Health log before and after a step or a run (`result.json` → `health` of
/// the run and of each step), and the figures assertions read from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Health {
    /// The log before the first request.
    pub before: SmartLog,
    /// The log after the last completion.
    pub after: SmartLog,
    /// Highest composite temperature seen over the span (the logs before and after and
    /// the samples taken about once a second in between), kelvin.
    #[serde(default)]
    pub temperature_max_k: u16,
    /// Whether the drive throttled during the span: its thermal-management transition
    /// count rose, or the temperature warning appeared.
    #[serde(default)]
    pub throttled: bool,
    /// Every change of the Critical Warning bits, of the temperature against the
    /// controller's thresholds and of the media error count during the span, in time
    /// order, each dated by the first sample that showed it
    /// ([`crate::health_events::events`]).
    #[serde(default)]
    pub events: Vec<crate::health_events::HealthEvent>,
}

impl Health {
    /// A figure over the span, as [`HealthMetric`] defines it (None: the controller does
    /// not report it, e.g. write amplification without the OCP C0h log): counters as the change
    /// (saturating at 0: a counter never runs back), the critical-warning bits at the
    /// end, temperature in °C.
    pub fn value(&self, m: HealthMetric) -> Option<f64> {
        let (b, a) = (&self.before, &self.after);
        let delta = |f: fn(&SmartLog) -> u64| f(a).saturating_sub(f(b)) as f64;
        Some(match m {
            HealthMetric::MediaErrors => delta(|s| s.media_errors),
            HealthMetric::CriticalWarning => f64::from(a.critical_warning),
            HealthMetric::CriticalWarningRaised => f64::from(crate::health_events::raised_bits(
                b.critical_warning,
                &self.events,
            )),
            HealthMetric::TemperatureMax => {
                f64::from(
                    self.temperature_max_k
                        .max(a.temperature_k)
                        .max(b.temperature_k),
                ) - 273.15
            }
            HealthMetric::DataUnitsWritten => delta(|s| s.data_units_written),
            HealthMetric::DataUnitsRead => delta(|s| s.data_units_read),
            HealthMetric::HostWriteCommands => delta(|s| s.host_write_commands),
            HealthMetric::HostReadCommands => delta(|s| s.host_read_commands),
            HealthMetric::ErrorLogEntries => delta(|s| s.error_log_entries),
            HealthMetric::ThermalTransitions => {
                delta(|s| u64::from(s.thermal_transitions[0]) + u64::from(s.thermal_transitions[1]))
            }
            HealthMetric::AvailableSpare => f64::from(a.available_spare_pct),
            HealthMetric::PercentageUsed => f64::from(a.percentage_used_pct),
            HealthMetric::Throttled => f64::from(u8::from(self.throttled)),
            HealthMetric::Ocp(o) => {
                crate::ocp::SmartExtended::span(b.ocp_smart.as_ref()?, a.ocp_smart.as_ref()?, o)
                    as f64
            }
            HealthMetric::Fdp(f) => {
                let (fb, fa) = (b.fdp.as_ref()?, a.fdp.as_ref()?);
                let v = |s: &crate::fdp::FdpStatistics| match f {
                    FdpMetric::HostWritten => s.host_written_bytes,
                    FdpMetric::MediaWritten => s.media_written_bytes,
                    FdpMetric::MediaErased => s.media_erased_bytes,
                };
                v(fa).saturating_sub(v(fb)) as f64
            }
            HealthMetric::WriteAmplification if b.fdp.is_some() && a.fdp.is_some() => {
                // Both counted by the drive (FDP statistics): exact.
                let host = self.value(HealthMetric::Fdp(FdpMetric::HostWritten))?;
                let media = self.value(HealthMetric::Fdp(FdpMetric::MediaWritten))?;
                if host == 0.0 {
                    return None;
                }
                media / host
            }
            HealthMetric::WriteAmplification => {
                // Media bytes written (OCP C0h) per host byte written (data units).
                let (ob, oa) = (b.ocp_smart.as_ref()?, a.ocp_smart.as_ref()?);
                let media = oa
                    .media_written_bytes
                    .saturating_sub(ob.media_written_bytes);
                let host = delta(|s| s.data_units_written) * DATA_UNIT_BYTES as f64;
                if host == 0.0 {
                    return None;
                }
                media as f64 / host
            }
        })
    }
}

pub use crate::health_events::HealthSample;

#[cfg(test)]
mod tests {
    use super::*;

    fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
        b[at..at + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn identify_controller_fields_at_their_offsets() {
        let mut b = [0u8; 4096];
        put(&mut b, 0, &0x1b36u16.to_le_bytes());
        put(&mut b, 4, b"deadbeef            ");
        put(&mut b, 24, format!("{:<40}", "QEMU NVMe Ctrl").as_bytes());
        put(&mut b, 64, b"7.2.22  ");
        b[260] = 0b0000_0110; // 3 slots
        put(&mut b, 256, &0x010au16.to_le_bytes());
        put(&mut b, 266, &343u16.to_le_bytes());
        put(&mut b, 268, &373u16.to_le_bytes());
        put(&mut b, 328, &0u32.to_le_bytes());
        b[524] = 0b101;
        put(&mut b, 516, &256u32.to_le_bytes());
        put(&mut b, 526, &7u16.to_le_bytes());
        put(&mut b, 528, &3u16.to_le_bytes());
        let c = NvmeController::parse(&b);
        assert_eq!(c.atomic_write_unit_normal_blocks, 8, "AWUN is 0's based");
        assert_eq!(c.atomic_write_unit_power_fail_blocks, 4);
        assert_eq!(c.vendor_id, 0x1b36);
        assert_eq!(c.serial, "deadbeef");
        assert_eq!(c.model, "QEMU NVMe Ctrl");
        assert_eq!(c.firmware_revision, "7.2.22");
        assert_eq!(c.firmware_slots, 3);
        assert!(c.format_supported);
        assert_eq!(c.sanitize, SanitizeCapabilities::default());
        assert!(c.format_attributes.all_namespaces && c.format_attributes.crypto_erase);
        assert!(!c.format_attributes.secure_erase_all_namespaces);
        assert_eq!(c.warning_temperature_k, Some(343));
        assert_eq!(c.critical_temperature_k, Some(373));
        assert_eq!(c.namespaces, 256);
    }

    #[test]
    fn identify_namespace_uses_the_formatted_lba_format() {
        let mut b = [0u8; 4096];
        put(&mut b, 0, &2048u64.to_le_bytes());
        put(&mut b, 8, &2048u64.to_le_bytes());
        b[26] = 1; // LBA format 1
        put(&mut b, 128, &(9u32 << 16).to_le_bytes()); // format 0: 512 B
        put(&mut b, 132, &((12u32 << 16) | 8).to_le_bytes()); // format 1: 4 KiB + 8 B
        put(&mut b, 36, &1u16.to_le_bytes());
        let n = NvmeNamespace::parse(1, &b);
        assert_eq!((n.size_blocks, n.lba_format), (2048, 1));
        assert_eq!((n.lba_data_size_bytes, n.metadata_bytes), (4096, 8));
        assert_eq!(
            n.atomic, None,
            "NSABP clear: the namespace fields are not valid"
        );
        let mut controller = NvmeController::parse(&[0u8; 4096]);
        controller.atomic_write_unit_power_fail_blocks = 4;
        let id = |namespace| NvmeIdentity {
            controller: controller.clone(),
            namespace,
            fdp: None,
        };
        assert_eq!(
            id(n).power_fail_atomic_bytes(),
            16384,
            "the controller's AWUPF"
        );
        b[24] = 0x2;
        put(&mut b, 34, &15u16.to_le_bytes());
        put(&mut b, 44, &64u16.to_le_bytes());
        let n = NvmeNamespace::parse(1, &b);
        let a = n.atomic.expect("NSABP set");
        assert_eq!(
            (a.write_unit_normal_blocks, a.write_unit_power_fail_blocks),
            (16, 2)
        );
        assert_eq!(
            (a.boundary_size_power_fail_blocks, a.boundary_offset_blocks),
            (64, 0)
        );
        assert_eq!(
            id(n).power_fail_atomic_bytes(),
            8192,
            "the namespace's NAWUPF wins"
        );
    }

    #[test]
    fn write_amplification_is_media_per_host_bytes() {
        let log = |units, media| SmartLog {
            data_units_written: units,
            ocp_smart: Some(crate::ocp::SmartExtended {
                media_written_bytes: media,
                ..Default::default()
            }),
            ..SmartLog::default()
        };
        let h = Health {
            before: log(10, 1 << 30),
            after: log(12, (1 << 30) + 2_048_000),
            temperature_max_k: 0,
            throttled: false,
            events: Vec::new(),
        };
        // 1,024,000 host bytes (2 units), 2,048,000 media bytes: WA 2.
        assert_eq!(h.value(HealthMetric::WriteAmplification), Some(2.0));
        let none = Health {
            before: SmartLog::default(),
            ..h
        };
        assert_eq!(none.value(HealthMetric::WriteAmplification), None);
    }

    #[test]
    fn smart_log_counters_and_saturation() {
        let mut b = [0u8; 512];
        b[0] = 0x02;
        put(&mut b, 1, &323u16.to_le_bytes());
        b[3] = 100;
        b[4] = 10;
        put(&mut b, 48, &7u128.to_le_bytes());
        put(&mut b, 80, &1234u128.to_le_bytes());
        put(&mut b, 160, &u128::MAX.to_le_bytes());
        put(&mut b, 216, &3u32.to_le_bytes());
        let s = SmartLog::parse(&b);
        assert_eq!(s.critical_warning, 2);
        assert_eq!(s.temperature_k, 323);
        assert!((s.temperature_c() - 49.85).abs() < 1e-9);
        assert_eq!((s.data_units_written, s.host_write_commands), (7, 1234));
        assert_eq!(s.media_errors, u64::MAX);
        assert_eq!(s.thermal_transitions, [3, 0]);
    }
}
