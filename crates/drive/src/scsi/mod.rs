//! SCSI drives through SG_IO: INQUIRY and its VPD pages, READ CAPACITY (16) and LOG SENSE,
//! decoded in `decode` into `iogate_result::disk`. Beside `ata` and `nvme`; the `disk`
//! module picks the protocol a drive speaks.

pub mod commands;
pub mod decode;
pub mod erase;
