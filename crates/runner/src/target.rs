//! Targets: a regular file or a block device, probed, identified and guarded.
//!
//! [`Target::probe`] reads geometry (capacity, logical block size) without writing, for
//! `iogate plan`; [`Target::prepare`] creates or grows a file target and checks that a
//! block device may be written ([`check_destructive`]); [`Target::identity`] collects
//! what every result records (model, serial, firmware revision from sysfs). The engine
//! opens the target once per job with [`Target::open_job`].

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iogate_spec::Geometry;

use crate::error::RunError;
use iogate_result::{BackingDevice, HostIdentity, TargetIdentity, TargetKind};

/// This machine's identity.
pub fn current_host() -> HostIdentity {
    use sha2::Digest;
    let name = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    let machine_id = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
        .iter()
        .find_map(|p| sysfs_read(Path::new(p)))
        .map(|id| {
            let digest = sha2::Sha256::digest(format!("iogate:{id}").as_bytes());
            digest[..8].iter().map(|b| format!("{b:02x}")).collect()
        });
    HostIdentity { name, machine_id }
}

/// The whole disk holding device number `dev` (a file's `st_dev`); None for file
/// systems without a block device (tmpfs, overlay, NFS).
fn backing_device(dev: u64) -> Option<BackingDevice> {
    let disk = sysfs_disk_dir(dev)?;
    Some(BackingDevice {
        device_name: disk.file_name()?.to_string_lossy().into_owned(),
        model: sysfs_read(&disk.join("device/model")),
        serial: sysfs_read(&disk.join("device/serial"))
            .or_else(|| sysfs_read(&disk.join("serial"))),
    })
}

/// A target ready to be probed or run on.
#[derive(Debug, Clone)]
pub struct Target {
    /// Path of the file or device.
    pub path: PathBuf,
    /// What it is.
    pub kind: TargetKind,
    /// Capacity in bytes now (0 for a missing file).
    pub capacity_bytes: u64,
    /// Logical block size.
    pub logical_block_size: u32,
    /// Whether O_DIRECT works on it (checked by `prepare`).
    pub direct_io: bool,
    /// The namespace of an NVMe generic character device, as passthrough addresses it.
    pub nvme_namespace: Option<crate::engine::job::Passthrough>,
    /// A zoned block device's zone model (sysfs `queue/zoned`); None: conventional.
    pub zoned: Option<iogate_result::zoned::ZoneModel>,
    /// A ZNS namespace's geometry from Identify, for its generic device (the block
    /// layer's sysfs describes the block device's).
    pub zns: Option<iogate_drive::nvme::ZnsNamespace>,
}

fn sysfs_read(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// sysfs directory of the whole disk holding block device `rdev` (a partition's parent).
fn sysfs_disk_dir(rdev: u64) -> Option<PathBuf> {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let dir = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if dir.join("partition").exists() {
        dir.parent().map(Path::to_path_buf)
    } else {
        Some(dir)
    }
}

impl Target {
    /// Whether the target is a partition of a block device (sysfs `partition`): the
    /// drive holding it has other data than the target's.
    pub fn is_partition(&self) -> bool {
        if self.kind != TargetKind::BlockDevice {
            return false;
        }
        std::fs::metadata(&self.path).is_ok_and(|m| {
            let (major, minor) = (libc::major(m.rdev()), libc::minor(m.rdev()));
            Path::new(&format!("/sys/dev/block/{major}:{minor}/partition")).exists()
        })
    }

    /// The most bytes one discard may cover (sysfs `queue/discard_max_bytes` of the disk;
    /// 0: the device does not discard); None for files or when unreadable.
    pub fn discard_max_bytes(&self) -> Option<u64> {
        self.queue_limit("discard_max_bytes")
    }

    /// A number in the disk's sysfs `queue/` directory (`discard_max_bytes`,
    /// `write_zeroes_max_bytes`); None for files or when unreadable.
    pub fn queue_limit(&self, name: &str) -> Option<u64> {
        let m = std::fs::metadata(&self.path).ok()?;
        let disk = sysfs_disk_dir(m.rdev())?;
        sysfs_read(&disk.join("queue").join(name))?.parse().ok()
    }

    /// Probes a path without writing. A missing path is a file target of capacity 0.
    ///
    /// Errors: the path exists but is neither a regular file nor a block device, or
    /// cannot be opened or measured.
    pub fn probe(path: &Path) -> Result<Target, RunError> {
        let io = |e: std::io::Error| RunError::Target {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = path
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(Path::new("."));
                if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink()) {
                    return Err(RunError::Target {
                        path: path.to_path_buf(),
                        message: "a link to nothing (its target does not exist): name \
                                  the drive or file itself"
                            .into(),
                    });
                }
                refuse_in_dev(path, "does not exist")?;
                let lbs = dio_align(dir).unwrap_or(512);
                return Ok(Target {
                    path: path.to_path_buf(),
                    kind: TargetKind::File,
                    capacity_bytes: 0,
                    logical_block_size: lbs,
                    direct_io: true,
                    nvme_namespace: None,
                    zoned: None,
                    zns: None,
                });
            }
            Err(e) => return Err(io(e)),
        };
        if meta.file_type().is_char_device() {
            return Self::probe_generic(path);
        }
        if meta.file_type().is_block_device() {
            let mut f = File::open(path).map_err(io)?;
            let capacity = f.seek(SeekFrom::End(0)).map_err(io)?;
            let lbs = rustix::fs::ioctl_blksszget(&f).map_err(|e| io(e.into()))?;
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::BlockDevice,
                capacity_bytes: capacity,
                logical_block_size: lbs,
                direct_io: true,
                nvme_namespace: None,
                zoned: sysfs_disk_dir(meta.rdev())
                    .and_then(|d| iogate_drive::zoned::zone_model(&d)),
                zns: None,
            })
        } else if meta.file_type().is_file() {
            refuse_in_dev(path, "is a regular file, not a device")?;
            let lbs = dio_align(path).unwrap_or(512);
            Ok(Target {
                path: path.to_path_buf(),
                kind: TargetKind::File,
                capacity_bytes: meta.len(),
                logical_block_size: lbs,
                direct_io: true,
                nvme_namespace: None,
                zoned: None,
                zns: None,
            })
        } else {
            Err(RunError::Target {
                path: path.to_path_buf(),
                message: "not a regular file, a block device or an NVMe generic device".into(),
            })
        }
    }

    /// An NVMe generic character device: the namespace's size and LBA size from Identify
    /// Namespace (there is no block layer to ask).
    ///
    /// Errors: not an NVMe namespace (NVME_IOCTL_ID fails), Identify fails (not root), or
    /// the LBA format carries metadata (not supported).
    fn probe_generic(path: &Path) -> Result<Target, RunError> {
        let err = |message: String| RunError::Target {
            path: path.to_path_buf(),
            message,
        };
        let f = File::open(path).map_err(|e| err(e.to_string()))?;
        let nsid = iogate_drive::nvme::namespace_id(&f).map_err(|e| {
            err(format!("a character device that is not an NVMe namespace ({e}); iogate runs on files, block devices and NVMe generic devices (/dev/ngXnY)"))
        })?;
        let ns = iogate_drive::nvme::identify_namespace(&f, nsid)
            .map_err(|e| err(format!("Identify Namespace {nsid}: {e}")))?;
        // With PI whose tuple fills the metadata, the controller inserts and strips it
        // (PRACT 1): the transfer is the data alone. Other metadata needs a buffer of
        // its own, which passthrough does not send yet.
        let tuple = ns.protection.map(|p| p.guard.tuple_bytes());
        if ns.metadata_bytes > 0 && tuple != Some(ns.metadata_bytes) {
            return Err(err(format!(
                "its LBA format {} has {} metadata bytes per block{}; passthrough supports formats without metadata, or whose metadata is exactly the protection information tuple (the controller then inserts and checks it, PRACT 1)",
                ns.lba_format,
                ns.metadata_bytes,
                match tuple {
                    Some(t) => format!(" of which {t} are protection information"),
                    None => " and no protection information".into(),
                }
            )));
        }
        let lbs = ns.lba_data_size_bytes;
        if !lbs.is_power_of_two() || lbs < 512 {
            return Err(err(format!("unusable LBA data size {lbs}")));
        }
        // A namespace of the Zoned Namespace Command Set answers its Identify; any other
        // refuses it (Invalid Field), which is no error here.
        let zns = iogate_drive::nvme::identify_zns(&f, nsid, ns.lba_format, lbs).ok();
        Ok(Target {
            path: path.to_path_buf(),
            kind: TargetKind::NvmeGeneric,
            capacity_bytes: ns.size_blocks.saturating_mul(u64::from(lbs)),
            logical_block_size: lbs,
            direct_io: true,
            nvme_namespace: Some(crate::engine::job::Passthrough {
                nsid,
                lba_shift: lbs.trailing_zeros(),
                placement: Vec::new(),
                protection: ns.protection,
                action: iogate_spec::PiAction::Controller,
                zone_append: None,
            }),
            zoned: zns.map(|_| iogate_result::zoned::ZoneModel::HostManaged),
            zns,
        })
    }

    /// What the spec compiler needs to know.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            capacity_bytes: self.capacity_bytes,
            logical_block_size: self.logical_block_size,
            growable: self.kind == TargetKind::File,
            resolved: true,
        }
    }

    /// The destructive-write guard alone, changing nothing: for a block device (or a
    /// namespace's generic device) that the plan writes, refuses one holding data unless
    /// `allow_destructive`, and a read-only one. A file target passes (it is created or
    /// grown by [`Target::prepare`]). A run over several drives checks every drive with
    /// it before any is prepared.
    pub fn check(&self, writes: bool, allow_destructive: bool) -> Result<(), RunError> {
        match self.kind {
            TargetKind::NvmeGeneric => {
                if writes && !allow_destructive {
                    // The namespace's block device, where the kernel made one, tells
                    // whether it holds a file system; without one nothing can.
                    let name = self
                        .path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned());
                    let block = name
                        .as_deref()
                        .and_then(|n| n.strip_prefix("ng"))
                        .map(|rest| PathBuf::from(format!("/dev/nvme{rest}")))
                        .filter(|p| p.exists());
                    match block {
                        Some(b) => check_destructive(&b)?,
                        None => {
                            return Err(RunError::Target {
                                path: self.path.clone(),
                                message: "the plan writes, and without the namespace's block device iogate cannot check it for data: pass --allow-destructive".into(),
                            })
                        }
                    }
                }
            }
            TargetKind::BlockDevice => {
                if writes && !allow_destructive {
                    check_destructive(&self.path)?;
                }
                if writes {
                    // A read-only device (write-protected, `blockdev --setro`, `losetup
                    // -r`) is refused now, not after the reads of the run. Opening it
                    // for writing succeeds (writes then fail with EPERM), so sysfs `ro`
                    // decides.
                    let ro = std::fs::metadata(&self.path).ok().and_then(|m| {
                        let r = m.rdev();
                        sysfs_read(Path::new(&format!(
                            "/sys/dev/block/{}:{}/ro",
                            libc::major(r),
                            libc::minor(r)
                        )))
                    });
                    if ro.as_deref() == Some("1") {
                        return Err(RunError::Target {
                            path: self.path.clone(),
                            message: "the plan writes, but the device is read-only (sysfs ro = 1; `blockdev --setrw` clears it)".into(),
                        });
                    }
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&self.path)
                        .map_err(|e| RunError::Target {
                            path: self.path.clone(),
                            message: format!(
                                "the plan writes, but it cannot be opened for writing: {e}"
                            ),
                        })?;
                }
            }
            TargetKind::File => {}
        }
        Ok(())
    }

    /// Makes the target ready for a run that uses `size` bytes: [`Target::check`], then
    /// creates or grows a file target. Checks that O_DIRECT works (files on tmpfs fall
    /// back to buffered I/O, recorded as `direct_io: false`). Nothing is written before
    /// the check.
    pub fn prepare(
        &mut self,
        size: u64,
        writes: bool,
        allow_destructive: bool,
    ) -> Result<(), RunError> {
        self.check(writes, allow_destructive)?;
        let io = |e: std::io::Error| RunError::Target {
            path: self.path.clone(),
            message: e.to_string(),
        };
        match self.kind {
            TargetKind::NvmeGeneric => {
                // Commands bypass the page cache: no O_DIRECT to check.
                self.direct_io = true;
                return Ok(());
            }
            TargetKind::BlockDevice => {}
            TargetKind::File => {
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&self.path)
                    .map_err(io)?;
                if f.metadata().map_err(io)?.len() < size {
                    f.set_len(size).map_err(io)?;
                }
                self.capacity_bytes = self.capacity_bytes.max(size);
            }
        }
        match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.path)
        {
            Ok(_) => self.direct_io = true,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && self.kind == TargetKind::File => {
                self.direct_io = false
            }
            Err(e) => return Err(io(e)),
        }
        Ok(())
    }

    /// Opens the target for one job: read-write (or read-only when the step only
    /// reads), O_DIRECT when supported.
    pub fn open_job(&self, write: bool) -> Result<File, RunError> {
        let mut o = OpenOptions::new();
        o.read(true).write(write);
        if self.direct_io && self.kind != TargetKind::NvmeGeneric {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(&self.path).map_err(|e| RunError::Target {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }

    /// Whether the device is still in the system: for a block device, its major:minor in
    /// /sys/dev/block (a removed drive leaves it even while iogate holds it open) with a
    /// capacity above 0 (the kernel sets a removed NVMe namespace's capacity to 0 before
    /// its entry goes: a run saw reads of LBA 0 end at end-of-file on a hot-removed
    /// controller while the entry was still there); files and character devices: whether
    /// the path exists.
    pub fn present(&self) -> bool {
        let Ok(meta) = std::fs::metadata(&self.path) else {
            return false;
        };
        if self.kind != TargetKind::BlockDevice {
            return true;
        }
        let rdev = meta.rdev();
        let entry = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
        let sectors = std::fs::read_to_string(format!("{entry}/size"));
        Path::new(&entry).exists()
            && sectors.map_or(true, |s| s.trim().parse::<u64>().map_or(true, |n| n > 0))
    }

    /// Whether the device's queue polls (sysfs `queue/io_poll`); None for files or
    /// when unreadable.
    pub fn io_poll(&self) -> Option<bool> {
        if self.kind != TargetKind::BlockDevice {
            return None;
        }
        let disk = std::fs::metadata(&self.path)
            .ok()
            .and_then(|m| sysfs_disk_dir(m.rdev()))?;
        sysfs_read(&disk.join("queue/io_poll")).map(|s| s == "1")
    }

    /// A zoned block device's open and active zone limits (`zoned::limits`), None where
    /// there is none or the device is not a zoned block device.
    pub fn zone_limits(&self) -> (Option<u32>, Option<u32>) {
        if let Some(z) = &self.zns {
            return (z.max_open_zones, z.max_active_zones);
        }
        std::fs::metadata(&self.path)
            .ok()
            .and_then(|m| sysfs_disk_dir(m.rdev()))
            .map_or((None, None), |d| iogate_drive::zoned::limits(&d))
    }

    /// A block device's largest unsplit request, bytes (`zoned::max_request_bytes`).
    pub fn max_request_bytes(&self) -> Option<u64> {
        if self.kind == TargetKind::NvmeGeneric {
            // Passthrough commands are never split: one too large is refused whole.
            return Some(u64::MAX);
        }
        std::fs::metadata(&self.path)
            .ok()
            .and_then(|m| sysfs_disk_dir(m.rdev()))
            .and_then(|d| iogate_drive::zoned::max_request_bytes(&d))
    }

    /// Identity recorded in results: sysfs facts for block devices.
    pub fn identity(&self) -> TargetIdentity {
        let mut id = TargetIdentity {
            path: self.path.display().to_string(),
            kind: self.kind,
            capacity_bytes: self.capacity_bytes,
            logical_block_size: self.logical_block_size,
            physical_block_size: None,
            model: None,
            serial: None,
            firmware_revision: None,
            rotational: None,
            scheduler: None,
            device_name: None,
            direct_io: self.direct_io,
            host: Some(current_host()),
            backing_device: None,
            identity_source: None,
            nvme: None,
            disk: None,
            zoned: None,
        };
        if self.kind == TargetKind::NvmeGeneric {
            id.device_name = self
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            self.nvme_identity(&mut id);
            id.zoned = self.zns_geometry();
            return id;
        }
        if self.kind != TargetKind::BlockDevice {
            // A file: the disk under its file system (the file itself may not exist yet
            // for `plan`; then its directory's).
            let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty());
            id.backing_device = std::fs::metadata(&self.path)
                .or_else(|_| std::fs::metadata(dir.unwrap_or(Path::new("."))))
                .ok()
                .and_then(|m| backing_device(m.dev()));
            return id;
        }
        let Some(disk) = std::fs::metadata(&self.path)
            .ok()
            .and_then(|m| sysfs_disk_dir(m.rdev()))
        else {
            return id;
        };
        let dev = disk.join("device");
        id.device_name = disk.file_name().map(|n| n.to_string_lossy().into_owned());
        // A loop device: the disk under its backing file.
        id.backing_device = sysfs_read(&disk.join("loop/backing_file"))
            .and_then(|f| std::fs::metadata(f).ok())
            .and_then(|m| backing_device(m.dev()));
        id.model = sysfs_read(&dev.join("model"));
        id.serial = sysfs_read(&dev.join("serial")).or_else(|| sysfs_read(&disk.join("serial")));
        id.firmware_revision =
            sysfs_read(&dev.join("firmware_rev")).or_else(|| sysfs_read(&dev.join("rev")));
        id.physical_block_size =
            sysfs_read(&disk.join("queue/physical_block_size")).and_then(|s| s.parse().ok());
        id.rotational = sysfs_read(&disk.join("queue/rotational")).map(|s| s == "1");
        id.scheduler = sysfs_read(&disk.join("queue/scheduler")).map(|s| {
            s.split_whitespace()
                .find(|w| w.starts_with('['))
                .map_or(s.clone(), |w| w.trim_matches(['[', ']']).to_string())
        });
        id.identity_source = Some("sysfs".into());
        id.zoned = self.zoned.and_then(|model| {
            let f = std::fs::File::open(&self.path).ok()?;
            let zones = iogate_drive::zoned::report(&f, self.capacity_bytes).ok()?;
            Some(iogate_drive::zoned::geometry(&disk, model, &zones))
        });
        if id
            .device_name
            .as_deref()
            .is_some_and(|n| n.starts_with("nvme"))
        {
            // The controller's own word, where the admin passthrough answers (root).
            self.nvme_identity(&mut id);
        } else if dev.join("scsi_device").exists() {
            // A SATA or SCSI drive's own word, through SG_IO (root).
            self.disk_identity(&mut id);
        }
        id
    }
}

impl Target {
    /// A SATA or SCSI drive's own word (ATA IDENTIFY DEVICE or SCSI INQUIRY through
    /// SG_IO) over `id`'s model, serial and firmware revision, where it answers.
    fn disk_identity(&self, id: &mut TargetIdentity) {
        use iogate_result::disk::DiskIdentity;
        let Some(d) = std::fs::File::open(&self.path)
            .ok()
            .and_then(|f| iogate_drive::disk::identity(&f).ok())
        else {
            return;
        };
        match &d {
            DiskIdentity::Ata(a) => {
                id.model = Some(a.model.clone());
                id.serial = Some(a.serial.clone());
                id.firmware_revision = Some(a.firmware_revision.clone());
                id.identity_source = Some("ata_identify".into());
            }
            DiskIdentity::Scsi(s) => {
                // The model is INQUIRY's product identification, as sysfs `model`,
                // lsblk and smartctl's "Product" give it: the vendor is its own field
                // (`disk.vendor`), and "QEMU QEMU HARDDISK" would key another baseline
                // than the same disk probed without SG_IO.
                id.model = Some(s.product.clone());
                id.serial = s.serial.clone().or(id.serial.take());
                id.firmware_revision = Some(s.revision.clone());
                id.identity_source = Some("scsi_inquiry".into());
            }
        }
        id.disk = Some(d);
    }

    /// The controller's own word (Identify through the admin passthrough, as root) over
    /// `id`'s model, serial and firmware revision, where it answers.
    fn nvme_identity(&self, id: &mut TargetIdentity) {
        if let Some(n) = std::fs::File::open(&self.path)
            .ok()
            .and_then(|f| iogate_drive::nvme::identity(&f).ok())
        {
            id.model = Some(n.controller.model.clone());
            id.serial = Some(n.controller.serial.clone());
            id.firmware_revision = Some(n.controller.firmware_revision.clone());
            id.identity_source = Some("nvme_admin".into());
            id.nvme = Some(n);
        }
    }
}

impl Target {
    /// The NVMe namespace the engine addresses through io_uring passthrough, for a
    /// generic character device target; None for files and block devices.
    pub fn passthrough(&self) -> Option<crate::engine::job::Passthrough> {
        self.nvme_namespace.clone()
    }

    /// A ZNS namespace's geometry for its generic device: Identify's, with every zone
    /// from Zone Management Receive; None for other targets or when the report fails.
    fn zns_geometry(&self) -> Option<iogate_result::zoned::ZonedGeometry> {
        let (ns, pt) = (self.zns.as_ref()?, self.nvme_namespace.as_ref()?);
        let f = std::fs::File::open(&self.path).ok()?;
        let range = (0, self.capacity_bytes);
        let zones =
            iogate_drive::nvme::report_zones(&f, pt.nsid, pt.lba_shift, range, ns.zone_size_bytes)
                .ok()?;
        let disk = iogate_drive::zoned::namespace_block_device(&self.path, pt.nsid)
            .and_then(|d| std::fs::metadata(d).ok())
            .and_then(|m| sysfs_disk_dir(m.rdev()));
        Some(iogate_drive::zoned::zns_geometry(
            ns,
            &zones,
            disk.as_deref(),
        ))
    }

    /// Where a step's zone reports and zone commands go: the zoned block device, or a
    /// ZNS namespace's generic device (with its block device for zone management, where
    /// it has one: `ZonePath::Nvme`), each open for writing when `write`.
    ///
    /// Errors: the device cannot be opened; a target that is not zoned.
    pub fn zone_path(&self, write: bool) -> Result<iogate_drive::zoned::ZonePath, RunError> {
        use iogate_drive::zoned::ZonePath;
        let file = self.open_job(write)?;
        let (Some(ns), Some(pt)) = (&self.zns, &self.nvme_namespace) else {
            return Ok(ZonePath::Block(file));
        };
        let block =
            iogate_drive::zoned::namespace_block_device(&self.path, pt.nsid).and_then(|d| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(write)
                    .open(d)
                    .ok()
            });
        Ok(ZonePath::Nvme {
            file,
            nsid: pt.nsid,
            lba_shift: pt.lba_shift,
            zone_size_bytes: ns.zone_size_bytes,
            block,
        })
    }
}

/// Direct-I/O offset alignment of a file or directory (statx STATX_DIOALIGN, Linux 6.1+).
fn dio_align(path: &Path) -> Option<u32> {
    let st = rustix::fs::statx(
        rustix::fs::CWD,
        path,
        rustix::fs::AtFlags::empty(),
        rustix::fs::StatxFlags::DIOALIGN,
    )
    .ok()?;
    (st.stx_dio_offset_align > 0).then_some(st.stx_dio_offset_align)
}

mod guard;
use guard::refuse_in_dev;
pub use guard::{check_destructive, probe_signatures, WIPEFS_ENV};
pub mod discover;
pub mod drive_key;
pub use drive_key::{on_target, same_drive, DriveKey};
