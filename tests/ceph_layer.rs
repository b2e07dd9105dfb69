//! The safe librados/librbd layer against the real cluster: object ops,
//! listing, drop discipline, image management, and where the connection
//! settings come from.

mod common;

use std::ffi::CString;
use std::time::Duration;

use cephbench::ceph::{self, Image};
use common::{cephbench, conf, connect, pool, pool_for, serial};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn object_ops_round_trip() {
    let _g = serial();
    let p = pool("cbt-layer");
    let rados = connect();
    let io = rados.ioctx(p).unwrap();
    let oid = CString::new("cbt_layer_obj").unwrap();
    rt().block_on(async {
        io.write_full(&oid, b"hello world")
            .unwrap()
            .await
            .unwrap()
            .check(|| "write_full".into())
            .unwrap();
        io.write(&oid, b"HELLO", 0)
            .unwrap()
            .await
            .unwrap()
            .check(|| "write".into())
            .unwrap();
        let st = io.stat(&oid).unwrap().await.unwrap();
        assert_eq!(st.ret, 0);
        assert_eq!(st.buf.size, 11);
        assert!(st.buf.mtime > 1_600_000_000);
        let rd = io.read(&oid, vec![0u8; 64], 0).unwrap().await.unwrap();
        assert_eq!(rd.ret, 11);
        assert_eq!(&rd.buf[..11], b"HELLO world");
        let listed = io.list_prefix("cbt_layer_").unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].name, "cbt_layer_obj");
        io.remove(&oid)
            .unwrap()
            .await
            .unwrap()
            .check(|| "remove".into())
            .unwrap();
        let gone = io.stat(&oid).unwrap().await.unwrap();
        assert_eq!(gone.ret, -i64::from(libc::ENOENT));
        let e = gone.check(|| "stat cbt_layer_obj".into()).unwrap_err();
        assert_eq!(e.errno(), Some(libc::ENOENT));
    });
}

/// Futures dropped early and the ioctx dropped right after: the ioctx waits
/// for the ops in flight, so every write lands and nothing crashes.
#[test]
fn dropping_an_ioctx_waits_for_ops_in_flight() {
    let _g = serial();
    let p = pool("cbt-layer");
    let rados = connect();
    {
        let io = rados.ioctx(p).unwrap();
        let payload = vec![7u8; 64 << 10];
        for i in 0..64 {
            let oid = CString::new(format!("cbt_drop_{i}")).unwrap();
            drop(io.write_full(&oid, &payload).unwrap());
        }
        drop(io);
    }
    let io = rados.ioctx(p).unwrap();
    assert_eq!(io.list_prefix("cbt_drop_").unwrap().len(), 64);
    rt().block_on(async {
        for i in 0..64 {
            let oid = CString::new(format!("cbt_drop_{i}")).unwrap();
            let st = io.stat(&oid).unwrap().await.unwrap();
            assert_eq!(st.buf.size, 64 << 10, "object {i} incomplete");
            io.remove(&oid).unwrap().await.unwrap();
        }
    });
}

#[test]
fn commands_return_json_and_status() {
    let _g = serial();
    let rados = connect();
    let out = rados
        .mon_command(r#"{"prefix":"osd stat","format":"json"}"#)
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.out).unwrap();
    assert!(v["num_osds"].as_u64().unwrap() >= 1);
    let out = rados
        .mgr_command(r#"{"prefix":"osd perf","format":"json"}"#)
        .unwrap();
    assert!(serde_json::from_slice::<serde_json::Value>(&out.out).is_ok());
    let out = rados.osd_command(0, r#"{"prefix":"perf dump"}"#).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.out).unwrap();
    assert!(v["osd"]["op_w"].is_u64());
    let e = rados
        .mon_command(r#"{"prefix":"no such command"}"#)
        .unwrap_err();
    assert_eq!(e.errno(), Some(libc::EINVAL), "{e}");
    assert!(e.to_string().contains("'no such command'"), "{e}");
    assert_eq!(rados.fsid().unwrap().len(), 36);
}

#[test]
fn image_lifecycle() {
    let _g = serial();
    let p = pool_for("cbt-rbd", "rbd");
    let rados = connect();
    let io = rados.ioctx(p).unwrap();
    let name = "cbt-layer-image";
    let _ = ceph::remove_image(&io, name);
    let layering = ceph::rbd::FEATURES[0].1;
    ceph::create_image(&io, name, 8 << 20, Some(layering)).unwrap();
    {
        let img = Image::open(&io, name).unwrap();
        let info = img.info().unwrap();
        assert_eq!(info.size, 8 << 20);
        assert_eq!(info.features, layering);
        assert_eq!(info.object_size, 4 << 20);
        assert!(
            info.block_name_prefix.starts_with("rbd_data."),
            "{}",
            info.block_name_prefix
        );
        img.resize(16 << 20).unwrap();
        assert_eq!(img.info().unwrap().size, 16 << 20);
        rt().block_on(async {
            let w = img.write(4096, vec![0x5A; 4096]).unwrap().await.unwrap();
            assert!(w.ret >= 0, "write failed: {}", w.ret); // librbd reports 0 for writes
            img.flush()
                .unwrap()
                .await
                .unwrap()
                .check(|| "flush".into())
                .unwrap();
            let r = img.read(4096, vec![0; 4096]).unwrap().await.unwrap();
            assert!(r.buf.iter().all(|b| *b == 0x5A));
            img.discard(0, 1 << 20)
                .unwrap()
                .await
                .unwrap()
                .check(|| "discard".into())
                .unwrap();
            let r = img.read(4096, vec![1; 4096]).unwrap().await.unwrap();
            assert!(
                r.buf.iter().all(|b| *b == 0),
                "discarded data reads as zeros"
            );
        });
    }
    ceph::remove_image(&io, name).unwrap();
    let e = Image::open(&io, name).err().expect("removed");
    assert_eq!(e.errno(), Some(libc::ENOENT));
}

/// Connection settings come from $CEPH_CONF and $CEPH_ARGS as with the ceph CLI.
#[test]
fn ceph_conf_and_ceph_args_are_honoured() {
    let _g = serial();
    let p = pool("cbt-layer");
    let mut c = assert_cmd::Command::cargo_bin("cephbench").unwrap();
    c.env("CEPH_CONF", conf())
        .args([
            "--progress",
            "never",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "--ops",
            "10",
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("k");
    std::fs::write(
        &bad,
        "[client.admin]\n\tkey = AQBvaBVkAAAAABAAn2k8nY5ZwM0b5cq0bJ0Q2A==\n",
    )
    .unwrap();
    let out = cephbench()
        .env("CEPH_ARGS", format!("--keyring {}", bad.display()))
        .args([
            "--connect-timeout",
            "5s",
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "--ops",
            "10",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "CEPH_ARGS' keyring was used");
    // An explicit --keyring wins over CEPH_ARGS.
    let good = std::fs::read_to_string(conf())
        .unwrap()
        .lines()
        .find_map(|l| l.trim().strip_prefix("keyring = ").map(str::to_string))
        .expect("the test conf names its keyring");
    cephbench()
        .env("CEPH_ARGS", format!("--keyring {}", bad.display()))
        .args([
            "--keyring",
            &good,
            "rados",
            "write",
            "-p",
            p,
            "-b",
            "4K",
            "--ops",
            "10",
        ])
        .assert()
        .success();
}
