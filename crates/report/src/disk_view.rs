//! The report's rows for a SATA or SCSI drive (`target.disk`, `disk_health`): what it
//! said of itself beyond model, serial and firmware (rotation, form factor, TRIM,
//! SANITIZE and Security for ATA; designators, provisioning, limits and log pages for
//! SCSI), and its health over the run in the fields it shares with NVMe's (temperature,
//! power-on hours, media errors) with the SMART attributes that are failing. Rows of the
//! target table (`identity_view`).

use iogate_result::disk::{DiskHealth, DiskHealthDetail, DiskIdentity, Rotation};
use iogate_result::RunResult;

/// (label, value) rows for a run on a SATA or SCSI drive; empty for any other target.
pub(crate) fn rows(result: &RunResult) -> Vec<(&'static str, String)> {
    let Some(disk) = &result.target.disk else {
        return Vec::new();
    };
    let health = match &result.disk_health {
        Some(h) => health(h),
        None => "not read (the drive did not answer SMART READ DATA or LOG SENSE)".into(),
    };
    vec![("drive", identity(disk)), ("drive health", health)]
}

fn rotation(r: Rotation) -> String {
    match r {
        Rotation::NotReported => "rotation not reported".into(),
        Rotation::SolidState => "solid state".into(),
        Rotation::Rpm { rpm } => format!("{rpm} rpm"),
    }
}

fn identity(d: &DiskIdentity) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    match d {
        DiskIdentity::Ata(a) => {
            let s = &a.sanitize;
            let sanitize: Vec<&str> = [
                (s.block_erase, "block erase"),
                (s.crypto_scramble, "crypto scramble"),
                (s.overwrite, "overwrite"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, n)| *n)
            .collect();
            format!(
                "ATA; {}, form factor {}; TRIM {}; SANITIZE {}; Security {}{}; SMART {}",
                rotation(a.rotation),
                a.form_factor.as_deref().unwrap_or("not reported"),
                yes(a.trim),
                if sanitize.is_empty() {
                    "none".to_string()
                } else {
                    sanitize.join(", ")
                },
                yes(a.security.supported),
                if a.security.frozen { " (frozen)" } else { "" },
                match (a.smart.supported, a.smart.enabled) {
                    (true, true) => "on",
                    (true, false) => "off",
                    _ => "not supported",
                },
            )
        }
        DiskIdentity::Scsi(s) => format!(
            "SCSI; {}, form factor {}; designators {}; thin provisioned {}; log pages {}",
            rotation(s.rotation),
            s.form_factor.as_deref().unwrap_or("not reported"),
            if s.designators.is_empty() {
                "none".into()
            } else {
                s.designators.join(", ")
            },
            yes(s.thin_provisioned),
            if s.log_pages.is_empty() {
                "none (no LOG SENSE)".to_string()
            } else {
                s.log_pages
                    .iter()
                    .map(|p| format!("{p:02X}h"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        ),
    }
}

/// `before → after` of a figure, or why there is none.
fn span<T: std::fmt::Display>(b: Option<T>, a: Option<T>, unit: &str) -> String {
    match (b, a) {
        (Some(b), Some(a)) => format!("{b}{unit} → {a}{unit}"),
        _ => "not reported".into(),
    }
}

fn health(h: &DiskHealth) -> String {
    let (b, a) = (&h.before, &h.after);
    let detail = match &a.detail {
        DiskHealthDetail::Ata { attributes } => {
            let failing: Vec<String> = attributes
                .iter()
                .filter(|x| x.failing)
                .map(|x| format!("{} ({})", x.name.as_deref().unwrap_or("?"), x.id))
                .collect();
            match failing.is_empty() {
                true => format!("{} SMART attributes, none failing", attributes.len()),
                false => format!("FAILING: {}", failing.join(", ")),
            }
        }
        DiskHealthDetail::Scsi(l) => match l.informational_exception {
            Some([0, 0]) => "no informational exception".into(),
            Some([asc, ascq]) => format!("INFORMATIONAL EXCEPTION {asc:02X}h/{ascq:02X}h"),
            None => "no informational exceptions page".into(),
        },
    };
    format!(
        "temperature {}, power-on hours {}, media errors {}; {detail}",
        span(b.temperature_c, a.temperature_c, " °C"),
        span(b.power_on_hours, a.power_on_hours, ""),
        span(b.media_errors, a.media_errors, ""),
    )
}
