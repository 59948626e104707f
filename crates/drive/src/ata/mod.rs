//! ATA drives through SG_IO: IDENTIFY DEVICE and SMART READ DATA / READ THRESHOLDS sent
//! as ATA PASS-THROUGH (16) (to a SATA drive behind libata's SCSI/ATA translation, or a
//! SAT bridge), decoded in `decode` into `iogate_result::disk`. Beside `scsi` and `nvme`;
//! the `disk` module picks the protocol a drive speaks.

pub mod commands;
pub mod decode;
