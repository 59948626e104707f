//! The target's identity rows of the run report (model, serial, firmware, capacity,
//! direct I/O, where the identity came from, the drive's health over the run). Part of
//! `view`, which puts them in the template context.

use iogate_result::RunResult;
use iogate_spec::units::format_bytes;

/// (label, value) rows for the report's target table.
pub(crate) fn rows(result: &RunResult) -> Vec<(&'static str, String)> {
    let t = &result.target;
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "—".into());
    let mut identity = vec![
        ("model", opt(&t.model)),
        ("serial", opt(&t.serial)),
        ("firmware revision", opt(&t.firmware_revision)),
        (
            "capacity",
            format!(
                "{} ({} bytes)",
                format_bytes(t.capacity_bytes as f64),
                t.capacity_bytes
            ),
        ),
        ("logical block size", format!("{} B", t.logical_block_size)),
        (
            "direct I/O",
            if t.direct_io {
                "yes (O_DIRECT)".into()
            } else {
                "no: page cache (results measure memory)".into()
            },
        ),
    ];
    if let Some(source) = &t.identity_source {
        let source = match source.as_str() {
            "nvme_admin" => "NVMe Identify Controller (admin passthrough)".to_string(),
            "ata_identify" => "ATA IDENTIFY DEVICE (SG_IO, ATA PASS-THROUGH (16))".to_string(),
            "scsi_inquiry" => "SCSI INQUIRY, VPD pages and READ CAPACITY (16) (SG_IO)".to_string(),
            other => other.to_string(),
        };
        identity.push(("identity from", source));
    }
    let disk = crate::disk_view::rows(result);
    if disk.is_empty() {
        identity.push(("drive health", health_summary(result.health.as_ref())));
    }
    identity.extend(disk);
    identity.extend(crate::health_events_view::row(&result.steps));
    if let Some(h) = &result.health {
        identity.push(("OCP extended SMART (C0h)", ocp_summary(h)));
    }
    if let Some(n) = &t.nvme {
        identity.push((
            "protection information",
            format!(
                "{}{}",
                protection(&n.namespace),
                protection_errors(&result.steps)
            ),
        ));
    }
    if let Some(fdp) = t.nvme.as_ref().and_then(|n| n.fdp.as_ref()) {
        identity.push((
            "flexible data placement",
            format!(
                "{}{}",
                fdp_summary(fdp, result.health.as_ref()),
                fdp_steps(&result.steps)
            ),
        ));
    }
    if let Some(z) = &t.zoned {
        identity.extend(crate::zone_view::rows(z, &result.steps));
    }
    identity
}

/// The FDP configuration, and the run's FDP statistics with the write amplification
/// they give.
fn fdp_summary(
    c: &iogate_result::fdp::FdpConfiguration,
    h: Option<&iogate_result::drive::Health>,
) -> String {
    use iogate_spec::metric::{FdpMetric as F, HealthMetric as M};
    let config = format!(
        "{} reclaim unit handles, {} reclaim groups, {} reclaim units{}",
        c.reclaim_unit_handles,
        c.reclaim_groups,
        format_bytes(c.reclaim_unit_bytes as f64),
        if c.valid {
            ""
        } else {
            " (configuration not valid)"
        }
    );
    let Some(h) = h.filter(|h| h.before.fdp.is_some() && h.after.fdp.is_some()) else {
        return format!("{config}; statistics not read");
    };
    let v = |m| format_bytes(h.value(M::Fdp(m)).unwrap_or(0.0));
    format!(
        "{config}; host bytes written +{}, media bytes written +{}, media bytes erased +{}, write amplification {}",
        v(F::HostWritten),
        v(F::MediaWritten),
        v(F::MediaErased),
        h.value(M::WriteAmplification)
            .map_or("— (nothing written)".to_string(), |w| format!("{w:.3}"))
    )
}

/// Each step's write amplification from the drive's FDP statistics, and the bytes it
/// wrote per placement handle (iogate's count / the drive's reclaim unit count).
fn fdp_steps(steps: &[iogate_result::StepResult]) -> String {
    use iogate_spec::metric::HealthMetric as M;
    let parts: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            let h = s.health.as_ref().filter(|h| h.after.fdp.is_some())?;
            let wa = h
                .value(M::WriteAmplification)
                .map_or("—".to_string(), |w| format!("{w:.3}"));
            let handles: Vec<String> = s
                .placement
                .iter()
                .map(|p| {
                    let drive = match &p.reclaim_unit {
                        Some(r) => match r.written_bytes {
                            Some(b) => format_bytes(b as f64),
                            None => "not counted (null_reason in result.json)".into(),
                        },
                        None => "not read".into(),
                    };
                    format!(
                        "handle {}: {} / {drive}",
                        p.handle,
                        format_bytes(p.host_written_bytes as f64)
                    )
                })
                .collect();
            Some(match handles.is_empty() {
                true => format!("{} {wa}", s.name),
                false => format!("{} {wa} ({})", s.name, handles.join(", ")),
            })
        })
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => format!(
            "; per step (write amplification; bytes per placement handle, iogate / drive): {}",
            parts.join("; ")
        ),
    }
}

/// Every field of the OCP C0h log over the run: the value at the end, with its change
/// where it moved; fields the drive leaves at zero read as 0, not as missing.
fn ocp_summary(h: &iogate_result::drive::Health) -> String {
    use iogate_spec::metric::OcpMetric;
    let (Some(b), Some(a)) = (&h.before.ocp_smart, &h.after.ocp_smart) else {
        return "not available (the controller has no OCP C0h log)".into();
    };
    let fields: Vec<String> = OcpMetric::NAMES
        .iter()
        .map(|(name, m)| {
            let name = name.trim_start_matches("ocp.");
            let (before, after) = (b.field(*m), a.field(*m));
            let shown = |v: u64| {
                if m.is_bytes() {
                    format_bytes(v as f64)
                } else {
                    v.to_string()
                }
            };
            match after.checked_sub(before) {
                Some(d) if d > 0 => format!("{name} {} (+{})", shown(after), shown(d)),
                None => format!("{name} {} (−{})", shown(after), shown(before - after)),
                _ => format!("{name} {}", shown(after)),
            }
        })
        .collect();
    fields.join(", ")
}

/// The run's SMART / Health figures in one line, or why there are none.
fn health_summary(h: Option<&iogate_result::drive::Health>) -> String {
    use iogate_spec::metric::HealthMetric as M;
    let Some(h) = h else {
        return "not available (no NVMe health log: a file, loop device or other disk)".into();
    };
    let v = |m| h.value(m).unwrap_or(f64::NAN);
    let units = v(M::DataUnitsWritten);
    let warning = v(M::CriticalWarning);
    format!(
        "media errors +{}, critical warnings {}, temperature max {:.0} °C, {}, data units written +{} ({}), host write commands +{}, thermal transitions +{}, write amplification {}",
        v(M::MediaErrors),
        if warning == 0.0 {
            "none".to_string()
        } else {
            format!("{:#04x} set", warning as u8)
        },
        v(M::TemperatureMax),
        if h.throttled {
            "THROTTLED"
        } else {
            "not throttled"
        },
        units,
        format_bytes(units * iogate_result::drive::DATA_UNIT_BYTES as f64),
        v(M::HostWriteCommands),
        v(M::ThermalTransitions),
        h.value(M::WriteAmplification)
            .map_or("not reported (no FDP statistics or OCP C0h log)".to_string(), |w| format!("{w:.2}"))
    )
}

/// The end-to-end check errors of the steps that ran with PI (passthrough), summed: as
/// the controller reported them, and the host's check where it ran; empty when no step
/// ran with PI.
fn protection_errors(steps: &[iogate_result::StepResult]) -> String {
    let Some(e) = steps
        .iter()
        .filter_map(|s| s.protection_errors)
        .reduce(|a, b| a.plus(b))
    else {
        return String::new();
    };
    let mut s = format!(
        "; reported by the controller: guard errors {}, application tag errors {}, reference tag errors {}",
        e.guard, e.application_tag, e.reference_tag
    );
    if e.host_checked_blocks > 0 {
        s += &format!(
            "; checked on the host (`host_checked`): {} blocks, reads failed on the guard {}, the application tag {}, the reference tag {}",
            e.host_checked_blocks, e.host_guard, e.host_application_tag, e.host_reference_tag
        );
    }
    s
}

/// The namespace's protection information in words.
fn protection(ns: &iogate_result::drive::NvmeNamespace) -> String {
    use iogate_result::protection::{MetadataTransfer, PiLocation};
    let Some(p) = ns.protection else {
        return format!("none ({} metadata bytes per block)", ns.metadata_bytes);
    };
    use iogate_result::protection::GuardFormat;
    format!(
        "type {}, {} guard, in the {} bytes of {} metadata bytes per block, {}",
        p.pi_type,
        match p.guard {
            GuardFormat::Crc16 => "16-bit (CRC-16 T10-DIF)",
            GuardFormat::Crc32c => "32-bit (CRC-32C)",
            GuardFormat::Crc64 => "64-bit (CRC-64 NVMe)",
        },
        match p.location {
            PiLocation::First => "first",
            PiLocation::Last => "last",
        },
        ns.metadata_bytes,
        match p.metadata {
            MetadataTransfer::ExtendedLba => "interleaved with the data (extended LBA, DIF)",
            MetadataTransfer::Separate => "in a separate buffer (DIX)",
        }
    )
}
