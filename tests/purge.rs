//! A purge the drive acknowledges and does not do, under the kernel's NVMe driver: QEMU's
//! NVMe controller over its NBD client, served by tests/purge/keepdata.c (an nbdkit
//! plugin that answers write-zeroes and trim with success and keeps the data). QEMU's
//! Format NVM writes zeroes over the namespace through its block backend, so the Format
//! completes with success and erases nothing; iogate's read-back of its stamped sample
//! blocks must fail the step naming every one. (The honest Format, on a raw image, passes
//! in tests/nvme.rs::a_purge_formats_and_sanitize_is_refused; the same plugin behind a
//! loop device, with a discard, in tests/snia.rs.)

mod common;

use std::path::Path;
use std::process::Command;

use common::{guest_put as put, json_file as json, s};

/// nbdkit serving `plugin` on a socket, killed on drop.
struct Server {
    dir: tempfile::TempDir,
    child: std::process::Child,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let image = dir.path().join("disk.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(64 << 20))
            .expect("image");
        let plugin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/purge/keepdata.c");
        let child = Command::new("nbdkit")
            .args(["-f", "-U"])
            .arg(dir.path().join("sock"))
            .args(["cc", s(&plugin)])
            .arg(format!("file={}", s(&image)))
            .spawn()
            .expect("nbdkit");
        let sock = dir.path().join("sock");
        common::wait_for(|| sock.exists(), "nbdkit's socket");
        Server { dir, child }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn a_format_that_erases_nothing_fails_the_purge() {
    let server = Server::start();
    let sock = server.dir.path().join("sock");
    let spec = "iogate: 1\nname: p\nsteps:\n  - purge: { name: erase, method: format }\n";
    let script = format!(
        "{}; iogate run /tmp/p.yaml --target /dev/nvme0n1 --allow-destructive -q --out /out/run; echo $? > /out/rc",
        put(spec, "/tmp/p.yaml")
    );
    let (rc, out) = common::qemu_nvme(&["--size", "64M", "--nbd", s(&sock)], &script);
    drop(server);
    assert_eq!(rc, 0, "the guest's script");
    let code = std::fs::read_to_string(out.path().join("rc")).expect("iogate's exit code");
    let r = json(&out.path().join("run/result.json"));
    assert_eq!(code.trim(), "1", "the purge passed: {}", r["steps"]);
    let step = &r["steps"][0];
    assert_eq!(step["purge"]["method"], "format (userdata erase)");
    let v = &step["purge"]["verified"];
    assert_eq!(v["sampled"], 64, "{v}");
    assert_eq!(v["surviving"], 64, "{v}");
    assert_eq!(v["surviving_lbas"], v["sampled_lbas"], "{v}");
    let lbas = v["sampled_lbas"].as_array().expect("lbas");
    let last = (64u64 << 20) / v["block_size_bytes"].as_u64().expect("block") - 1;
    assert_eq!((lbas[0].as_u64(), lbas[63].as_u64()), (Some(0), Some(last)));
    assert_eq!(step["metrics"]["errors"], 64);
}

tests_main![a_format_that_erases_nothing_fails_the_purge: [Root, Nbdkit, Qemu],];
