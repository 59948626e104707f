//! iogate's device protocols: what a drive is asked in its own language, apart from the
//! engine's reads and writes. [`nvme`] speaks to an NVMe controller through the admin
//! and I/O passthrough ioctls (Identify, logs, Format, Sanitize, FDP); [`zoned`] reads a
//! zoned block device's geometry and zones and manages them (report zones, reset, open,
//! close, finish); [`disk`] asks a SATA or SCSI drive for its identity and health
//! ([`ata`] and [`scsi`] through [`sg`], the SG_IO ioctl). The runner uses this crate (its steps, health reads, purges and the
//! zone-aware engine); the report never does. `unsafe` lives only in the ioctl layers
//! (`nvme::ioctl`, `zoned::ioctl`, `sg`). The result crate provides the types filled here.

pub mod ata;
pub mod disk;
pub mod nvme;
pub mod scsi;
pub mod sg;
pub mod zoned;
