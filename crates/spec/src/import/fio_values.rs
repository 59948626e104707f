//! fio's value syntax and option tables, for the fio importer: sizes with fio's suffixes
//! and `kb_base`, times with fio's default units, `bssplit` and `zoned` lists, option
//! aliases, and which options have no effect on the I/O or no iogate equivalent.
//! Source: fio's HOWTO ("Parameter types", "Job file parameters"), fio 3.x.

/// A size or a share of the target (`size=50%`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeValue {
    /// Bytes.
    Bytes(u64),
    /// Percent of the target.
    Percent(f64),
}

/// A fio size: an integer (decimal or `0x` hex) or a decimal with an optional suffix
/// `k`/`m`/`g`/`t`/`p`, optionally followed by `b` or `ib`. Case-insensitive. `None`
/// when malformed, negative, or beyond 64 bits (fio refuses those too).
///
/// The base follows fio's `kb_base` (HOWTO, "kb_base"): with the default 1024, fio's
/// compatibility mode inverts the standards, so `k`/`kb`/`m`/`mb` are powers of 1024 and
/// the IEC `kib`/`mib` are powers of 1000 (`16MiB` is 16,000,000 bytes, `16M`
/// 16,777,216: checked against fio 3.33 in tests/import.rs); with `kb_base=1000`, `kb`
/// is 1000 and `kib` 1024, as the standards say.
pub fn parse_bytes(v: &str, kb_base: u64) -> Option<u64> {
    let v = v.trim();
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok();
    }
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, suffix) = v.split_at(split);
    let suffix = suffix.trim().to_ascii_lowercase();
    let (letter, rest) = match suffix.chars().next() {
        None => return whole_or_fraction(num, 1),
        Some(c) => (c, &suffix[c.len_utf8()..]),
    };
    let power = match letter {
        'b' if rest.is_empty() => return whole_or_fraction(num, 1),
        'k' => 1,
        'm' => 2,
        'g' => 3,
        't' => 4,
        'p' => 5,
        _ => return None,
    };
    let iec = if kb_base == 1000 { 1024 } else { 1000 };
    let base: u64 = match rest {
        "" | "b" => kb_base,
        "ib" => iec,
        _ => return None,
    };
    whole_or_fraction(num, base.checked_pow(power)?)
}

/// `num × unit`, exactly for whole numbers (checked: `None` past 64 bits), rounded for
/// fractions (`1.5k`).
fn whole_or_fraction(num: &str, unit: u64) -> Option<u64> {
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(unit);
    }
    let x: f64 = num.parse().ok()?;
    let bytes = x * unit as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then(|| bytes.round() as u64)
}

/// A size or `N%`.
pub fn parse_size(v: &str, kb_base: u64) -> Option<SizeValue> {
    match v.trim().strip_suffix('%') {
        Some(p) => p
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=100.0).contains(p))
            .map(SizeValue::Percent),
        None => parse_bytes(v, kb_base).map(SizeValue::Bytes),
    }
}

/// A fio time in nanoseconds: a number with an optional unit (`us`/`usec`, `ms`/`msec`,
/// `s`/`sec`, `m`/`min`, `h`, `d`); without one, `default_unit_ns` (seconds for
/// `runtime`, `ramp_time`, `startdelay`; microseconds for `thinktime`).
pub fn parse_time_ns(v: &str, default_unit_ns: u64) -> Option<u64> {
    let v = v.trim();
    let split = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, unit) = v.split_at(split);
    let unit_ns = match unit.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_ns,
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" | "hr" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    };
    match num.parse::<u64>() {
        Ok(n) => n.checked_mul(unit_ns).filter(|ns| *ns <= i64::MAX as u64),
        Err(_) => {
            let x: f64 = num.parse().ok()?;
            let ns = x * unit_ns as f64;
            (ns.is_finite() && ns >= 0.0 && ns < i64::MAX as f64).then(|| ns.round() as u64)
        }
    }
}

/// `bssplit=4k/10:64k/50:32k/40`: (block size, percent) pairs; entries without a
/// percent share what the others leave, equally, and when every entry has one and they
/// sum below 100 the last weighted entry takes the rest (fio's rules, options.c and
/// io_u.c). `None` when malformed, when no entry is weighted, or when the given
/// percentages exceed 100.
pub fn parse_bssplit(v: &str, kb_base: u64) -> Option<Vec<(u64, f64)>> {
    let mut out = Vec::new();
    let mut open = 0usize;
    for part in v.split(':').filter(|p| !p.trim().is_empty()) {
        let (bs, pct) = part.split_once('/').unwrap_or((part, ""));
        let bs = parse_bytes(bs, kb_base)?;
        let pct = if pct.trim().is_empty() {
            open += 1;
            f64::NAN
        } else {
            pct.trim().parse::<f64>().ok()?
        };
        out.push((bs, pct));
    }
    let given: f64 = out.iter().map(|l| l.1).filter(|p| !p.is_nan()).sum();
    if out.is_empty() || given > 100.0 + 1e-9 {
        return None;
    }
    if open > 0 {
        let share = (100.0 - given) / open as f64;
        for l in &mut out {
            if l.1.is_nan() {
                l.1 = share;
            }
        }
    } else if given < 100.0 {
        // fio's get_next_buflen walks the entries until its draw falls under their
        // running sum, and past them keeps the last: the last weighted entry takes the
        // remainder.
        let last = out.iter_mut().rev().find(|l| l.1 > 0.0)?;
        last.1 += 100.0 - given;
    }
    Some(out)
}

/// `zoned:60/10:30/20:8/30:2/40` (percent of accesses / percent of the target), the part
/// after `zoned:`. `None` when malformed.
pub fn parse_zones(v: &str) -> Option<Vec<(f64, f64)>> {
    v.split(':')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (a, r) = p.split_once('/')?;
            Some((a.trim().parse().ok()?, r.trim().parse().ok()?))
        })
        .collect()
}

/// The canonical name of an option (fio's aliases folded).
pub fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "ba" => "blockalign",
        "io_limit" => "io_size",
        "timeout" => "runtime",
        "ss" => "steadystate",
        "jobname" => "name",
        "randseed" => "randseed",
        "blocksize_range" => "bsrange",
        "cpumask" => "cpus_allowed",
        "fill_fs" => "fill_device",
        "iodepth_batch" => "iodepth_batch_submit",
        "nr_files" => "nrfiles",
        _ => key,
    }
}

/// How an ioengine relates to iogate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineClass {
    /// A synchronous block engine: one request at a time per job (iodepth has no effect).
    Sync,
    /// An asynchronous block engine: iogate's io_uring engine does the same I/O.
    Async,
    /// NVMe commands through the generic character device.
    Passthrough,
    /// Out of scope, with the reason.
    Refused(&'static str),
}

/// The class of an `ioengine=` value.
pub fn engine_class(engine: &str) -> EngineClass {
    match engine.trim() {
        "sync" | "psync" | "vsync" | "pvsync" | "pvsync2" => EngineClass::Sync,
        "libaio" | "io_uring" | "posixaio" | "windowsaio" | "solarisaio" => EngineClass::Async,
        "io_uring_cmd" => EngineClass::Passthrough,
        "net"
        | "netsplice"
        | "rdma"
        | "librpma_apm_client"
        | "librpma_apm_server"
        | "librpma_gpspm_client"
        | "librpma_gpspm_server"
        | "http"
        | "nbd"
        | "nfs"
        | "rbd"
        | "rados"
        | "gfapi"
        | "gfapi_async"
        | "libhdfs"
        | "libiscsi"
        | "dfs"
        | "ime_aio"
        | "ime_psync"
        | "ime_psyncv"
        | "xnvme"
        | "spdk"
        | "libblkio" => EngineClass::Refused("a network, RDMA or remote-storage engine"),
        "falloc" | "filecreate" | "filedelete" | "filestat" | "dircreate" | "dirdelete"
        | "dirstat" | "ftruncate" | "e4defrag" | "splice" | "mmap" => {
            EngineClass::Refused("a filesystem or page-cache engine, not block I/O")
        }
        "null" | "cpuio" | "cpp_null" | "exec" => {
            EngineClass::Refused("an engine that does no storage I/O")
        }
        "sg" | "libzbc" | "mtd" | "dev-dax" | "libpmem" | "pmemblk" | "libcufile" => {
            EngineClass::Refused("a device-specific engine (SCSI generic, ZBC, MTD, PMEM, GPU)")
        }
        _ => EngineClass::Refused("an engine iogate does not know"),
    }
}

/// Options that change nothing that reaches the device (reporting, logging, engine
/// tuning iogate does itself), with what iogate does instead.
pub fn no_effect(key: &str) -> Option<&'static str> {
    Some(match key {
        "group_reporting" | "new_group" | "stats" | "per_job_logs" | "unified_rw_reporting" => {
            "reporting only; iogate reports every step"
        }
        "write_lat_log" | "write_bw_log" | "write_iops_log" | "write_hist_log" | "log_avg_msec"
        | "log_offset" | "log_prio" | "log_compression" | "log_hist_msec" | "write_iolog" => {
            "logging; iogate writes its own request log (ios.parquet)"
        }
        "clat_percentiles" | "lat_percentiles" | "slat_percentiles" | "percentile_list"
        | "disable_lat" | "disable_clat" | "disable_slat" | "disable_bw_measurement"
        | "gtod_reduce" | "block_error_percentiles" | "significant_figures" => {
            "latency accounting; iogate always records submission, completion and total latency"
        }
        "thread" => "iogate's jobs are threads",
        "registerfiles" | "fixedbufs" => "iogate always registers its file and buffers",
        "iodepth_batch_submit" | "iodepth_batch_complete" | "iodepth_batch_complete_min"
        | "iodepth_batch_complete_max" | "iodepth_low" | "io_submit_mode" | "nonvectored"
        | "sqthread_poll_cpu" | "busy_poll" => "engine tuning; iogate's engine batches by itself",
        "mem" | "iomem" | "mem_align" | "iomem_align" | "hugepage-size" => {
            "buffer memory; iogate uses its own registered buffers"
        }
        "randrepeat" | "random_generator" | "allrandrepeat" => {
            "random generator; iogate's randomness is seeded by the spec's seed"
        }
        "scramble_buffers" => "iogate's writes are unique by default",
        "invalidate" => "iogate bypasses the page cache (O_DIRECT), so there is nothing to invalidate",
        "verify_fatal" | "verify_dump" | "verify_async" | "verify_interval" | "verify_offset"
        | "verify_pattern" | "verify_backlog" | "verify_backlog_batch" | "verify_state_save"
        | "verify_state_load" | "verify_only" | "error_dump" => {
            "verification detail; iogate checks every read of a block it wrote, with its own checksum"
        }
        "kb_base" => "used to read this file's sizes",
        "description" | "name" => "names the spec or step",
        "filename" | "directory" => "the target is given when the spec runs (`--target`)",
        "cmd_type" => "NVMe passthrough is iogate's `engine: passthrough`",
        "exitall" | "exit_what" => "iogate's steps end on their own limits",
        _ => return None,
    })
}

/// Options iogate has no equivalent for, with the reason (anything not in this table and
/// not converted gets a generic warning).
pub fn unsupported(key: &str) -> Option<&'static str> {
    Some(match key {
        "bsrange" | "bs_unaligned" | "bs_is_seq_rand" => {
            "block sizes drawn from a range: use a mix (`bssplit`) instead"
        }
        "nrfiles" | "openfiles" | "filesize" | "file_service_type" | "filename_format"
        | "create_on_open" | "create_serialize" | "allow_file_create" | "unlink" | "fallocate"
        | "pre_read" | "create_only" | "unique_filename" => {
            "file-set options: iogate runs on one file or block device"
        }
        "end_fsync" | "fsync_on_close" | "write_barrier" => {
            "flushes at the end or as barriers: iogate flushes every N writes (`fsync:`)"
        }
        "zonemode" | "zonesize" | "zonerange" | "zoneskip" => {
            "zoned or strided access: not in iogate's access specification"
        }
        "max_open_zones"
        | "job_max_open_zones"
        | "read_beyond_wp"
        | "zone_reset_threshold"
        | "zone_reset_frequency"
        | "zonecapacity"
        | "ignore_zone_limits" => {
            "fio applies it with `zonemode=zbd` only, which this job does not set"
        }
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run" => {
            "latency-target search: not in iogate"
        }
        "flow" | "flow_sleep" | "flow_id" | "flow_watermark" => "flow control between jobs",
        "prio" | "prioclass" | "cmdprio" | "cmdprio_class" | "cmdprio_percentage"
        | "cmdprio_bssplit" => "I/O priorities",
        "numa_cpu_nodes" | "numa_mem_policy" | "cpus_allowed" | "cpus_allowed_policy" => {
            "CPU or NUMA placement: pin with the workload's `cpus:` list"
        }
        "rate_min" | "ratemin" | "rate_cycle" | "rate_ignore_thinktime" => "minimum-rate checks",
        "thinktime_spin" | "thinktime_blocks" | "thinktime_blocks_type" | "thinktime_iotime" => {
            "think time in blocks or with spinning: iogate pauses after every request"
        }
        "offset_increment" | "offset_align" => "per-job offsets",
        "ignore_error" | "error_dump_fatal" => "per-error policies",
        "replay_redirect" | "replay_align" | "replay_scale" | "replay_time_scale" => {
            "iolog replay remapping"
        }
        "dedupe_mode" | "dedupe_working_set_percentage" | "dedupe_global" => {
            "dedupe working sets: iogate's duplicates come from 16 contents per step"
        }
        "wait_for" => "waiting for a named job: iogate runs steps in order",
        "trim_percentage" | "trim_verify_zero" | "trim_backlog" => "trims",
        "fill_device" => "writing until the device is full: use a `precondition` step",
        "ss_dur" | "ss_ramp" | "steadystate_duration" | "steadystate_ramp_time" => {
            "part of fio's steady-state detection, which is not converted"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_suffixes_and_kb_base() {
        assert_eq!(parse_bytes("4k", 1024), Some(4096));
        assert_eq!(parse_bytes("4K", 1000), Some(4000));
        assert_eq!(parse_bytes("4KiB", 1000), Some(4096));
        assert_eq!(parse_bytes("10G", 1024), Some(10 << 30));
        assert_eq!(parse_bytes("1.5m", 1024), Some(1_572_864));
        assert_eq!(parse_bytes("512", 1024), Some(512));
        assert_eq!(parse_bytes("0x1000", 1024), Some(4096));
        assert_eq!(parse_bytes("4q", 1024), None);
        assert_eq!(parse_size("50%", 1024), Some(SizeValue::Percent(50.0)));
        // fio's default kb_base=1024 inverts the IEC suffixes (fio 3.33 reads `16MiB`
        // as 16,000,000 bytes and `16M` as 16,777,216).
        assert_eq!(parse_bytes("16MiB", 1024), Some(16_000_000));
        assert_eq!(parse_bytes("16M", 1024), Some(16 << 20));
        assert_eq!(parse_bytes("16MB", 1024), Some(16 << 20));
        // Checked, never wrapped.
        assert_eq!(parse_bytes("99999999999999999999", 1024), None);
        assert_eq!(parse_bytes("16777216p", 1024), None);
        assert_eq!(parse_bytes("-5", 1024), None);
        assert_eq!(parse_time_ns("99999999999999h", 1), None);
        assert_eq!(parse_time_ns("-5", 1_000_000_000), None);
    }

    #[test]
    fn times_use_the_option_default_unit() {
        assert_eq!(parse_time_ns("900", 1_000_000_000), Some(900_000_000_000));
        assert_eq!(parse_time_ns("10", 1_000), Some(10_000));
        assert_eq!(parse_time_ns("2m", 1_000_000_000), Some(120_000_000_000));
        assert_eq!(parse_time_ns("250ms", 1_000), Some(250_000_000));
        assert_eq!(parse_time_ns("x", 1), None);
    }

    #[test]
    fn bssplit_shares_the_rest_among_open_entries() {
        let s = parse_bssplit("4k/10:64k/50:32k/40", 1024).unwrap();
        assert_eq!(s, vec![(4096, 10.0), (65536, 50.0), (32768, 40.0)]);
        let s = parse_bssplit("4k/50:8k/:16k/", 1024).unwrap();
        assert_eq!(s[1].1, 25.0);
        assert!(parse_bssplit("4k/70:8k/40", 1024).is_none());
        // Below 100 with every entry weighted: the last weighted one takes the rest.
        let s = parse_bssplit("4k/30:8k/30:16k/0", 1024).unwrap();
        assert_eq!(s, vec![(4096, 30.0), (8192, 70.0), (16384, 0.0)]);
        assert!(parse_bssplit("4k/0:8k/0", 1024).is_none());
        assert_eq!(
            parse_zones("60/10:40/90").unwrap(),
            vec![(60.0, 10.0), (40.0, 90.0)]
        );
    }
}
