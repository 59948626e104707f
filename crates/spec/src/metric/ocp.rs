//! Figures of the OCP Datacenter NVMe SSD specification's SMART / Health Information
//! Extended log (C0h), addressed as `health.ocp.<name>` in metric paths. The parent
//! module's [`super::HealthMetric::Ocp`] carries one; the result crate's
//! `ocp::SmartExtended` decodes the log page and gives each figure's value.

use serde::{Deserialize, Serialize};

/// One field of the OCP C0h log (OCP Datacenter NVMe SSD Specification 2.0, "SMART /
/// Health Information Extended (Log Identifier C0h)"). Counters are the change over a
/// step or the run; states ([`OcpMetric::is_state`]) are the value at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OcpMetric {
    /// Physical Media Units Written added, bytes.
    MediaWritten,
    /// Physical Media Units Read added, bytes.
    MediaRead,
    /// Bad User NAND Blocks (raw count) added.
    BadUserBlocks,
    /// Bad System NAND Blocks (raw count) added.
    BadSystemBlocks,
    /// XOR Recovery Count added.
    XorRecoveries,
    /// Uncorrectable Read Error Count added.
    UncorrectableReads,
    /// Soft ECC Error Count added.
    SoftEccErrors,
    /// End to End Correction Counts: detected errors added.
    EndToEndDetected,
    /// End to End Correction Counts: corrected errors added.
    EndToEndCorrected,
    /// System Data % Used at the end, percent.
    SystemDataUsed,
    /// Refresh Counts added.
    Refreshes,
    /// User Data Erase Counts: the maximum's rise.
    UserDataErasesMax,
    /// User Data Erase Counts: the minimum's rise.
    UserDataErasesMin,
    /// Thermal Throttling Status: events added.
    ThermalThrottlingEvents,
    /// Thermal Throttling Status: current status at the end (0 none, 1 first level, 2
    /// second level, 3 critical).
    ThermalThrottlingStatus,
    /// PCIe Correctable Error Count added.
    PcieCorrectableErrors,
    /// Incomplete Shutdowns added.
    IncompleteShutdowns,
    /// % Free Blocks at the end, percent.
    FreeBlocks,
    /// Capacitor Health at the end, percent.
    CapacitorHealth,
    /// Unaligned I/O added.
    UnalignedIos,
    /// NUSE (namespace utilization) at the end, logical blocks.
    NamespaceUtilization,
    /// PLP Start Count added.
    PlpStarts,
    /// Endurance Estimate at the end (data units the drive expects to endure).
    EnduranceEstimate,
    /// PCIe Link Retraining Count added.
    PcieLinkRetrainings,
    /// Power State Change Count added.
    PowerStateChanges,
}

impl OcpMetric {
    /// Path names after `health.`, in the log's order.
    pub const NAMES: [(&'static str, OcpMetric); 25] = [
        ("ocp.media_written_bytes", OcpMetric::MediaWritten),
        ("ocp.media_read_bytes", OcpMetric::MediaRead),
        ("ocp.bad_user_blocks", OcpMetric::BadUserBlocks),
        ("ocp.bad_system_blocks", OcpMetric::BadSystemBlocks),
        ("ocp.xor_recoveries", OcpMetric::XorRecoveries),
        ("ocp.uncorrectable_reads", OcpMetric::UncorrectableReads),
        ("ocp.soft_ecc_errors", OcpMetric::SoftEccErrors),
        ("ocp.end_to_end_detected", OcpMetric::EndToEndDetected),
        ("ocp.end_to_end_corrected", OcpMetric::EndToEndCorrected),
        ("ocp.system_data_used_pct", OcpMetric::SystemDataUsed),
        ("ocp.refreshes", OcpMetric::Refreshes),
        ("ocp.user_data_erases_max", OcpMetric::UserDataErasesMax),
        ("ocp.user_data_erases_min", OcpMetric::UserDataErasesMin),
        (
            "ocp.thermal_throttling_events",
            OcpMetric::ThermalThrottlingEvents,
        ),
        (
            "ocp.thermal_throttling_status",
            OcpMetric::ThermalThrottlingStatus,
        ),
        (
            "ocp.pcie_correctable_errors",
            OcpMetric::PcieCorrectableErrors,
        ),
        ("ocp.incomplete_shutdowns", OcpMetric::IncompleteShutdowns),
        ("ocp.free_blocks_pct", OcpMetric::FreeBlocks),
        ("ocp.capacitor_health_pct", OcpMetric::CapacitorHealth),
        ("ocp.unaligned_ios", OcpMetric::UnalignedIos),
        (
            "ocp.namespace_utilization_blocks",
            OcpMetric::NamespaceUtilization,
        ),
        ("ocp.plp_starts", OcpMetric::PlpStarts),
        ("ocp.endurance_estimate", OcpMetric::EnduranceEstimate),
        ("ocp.pcie_link_retrainings", OcpMetric::PcieLinkRetrainings),
        ("ocp.power_state_changes", OcpMetric::PowerStateChanges),
    ];

    /// The path name after `health.` (`ocp.media_written_bytes`).
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|n| n.1 == self)
            .map_or("?", |n| n.0)
    }

    /// Whether the figure is a state read at the span's end (a percentage, a status, a
    /// utilization or an estimate) rather than a counter's change over the span.
    pub fn is_state(self) -> bool {
        matches!(
            self,
            OcpMetric::SystemDataUsed
                | OcpMetric::ThermalThrottlingStatus
                | OcpMetric::FreeBlocks
                | OcpMetric::CapacitorHealth
                | OcpMetric::NamespaceUtilization
                | OcpMetric::EnduranceEstimate
        )
    }

    /// Whether the figure is in bytes (so assertions may give it with a unit).
    pub fn is_bytes(self) -> bool {
        matches!(self, OcpMetric::MediaWritten | OcpMetric::MediaRead)
    }

    /// Whether a larger value is better.
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            OcpMetric::FreeBlocks | OcpMetric::CapacitorHealth | OcpMetric::EnduranceEstimate
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for (n, m) in OcpMetric::NAMES {
            assert!(seen.insert(n), "{n} twice");
            assert_eq!(m.name(), n);
        }
    }
}
