//! The safe librados/librbd layer against the real cluster: object ops,
//! listing, drop discipline, image management, and where the connection
//! settings come from.

use crate::common;

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
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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

/// An image with its data objects in another pool (`rbd_create4` with the
/// data-pool option, as `rbd create --data-pool`): it reports that pool's id,
/// the id resolves to the name, a write lands there and not in the image's
/// pool; an unknown data pool fails with ENOENT, an unknown pool id is
/// `NoSuchPool`. Under valgrind (tests/valgrind.sh): the options handle is
/// freed.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn image_with_a_data_pool() {
    let _g = serial();
    let meta = pool_for("cbt-rbd", "rbd");
    let data = pool("cbt-layer");
    let rados = connect();
    let io = rados.ioctx(meta).unwrap();
    let name = "cbt-layer-data-pool";
    let _ = ceph::remove_image(&io, name);
    let layering = ceph::rbd::FEATURES[0].1;
    ceph::create_image_in(&io, name, 8 << 20, Some(layering), Some(data)).unwrap();
    {
        let img = Image::open(&io, name).unwrap();
        let id = img.data_pool_id();
        assert_eq!(id, rados.pool_id(data).unwrap());
        assert_ne!(id, io.pool_id());
        assert_eq!(rados.pool_name(id).unwrap(), data);
        let info = img.info().unwrap();
        assert_eq!(info.features & layering, layering);
        rt().block_on(async {
            let w = img.write(0, vec![0x5A; 4096]).unwrap().await.unwrap();
            assert!(w.ret >= 0, "write failed: {}", w.ret);
        });
        let in_pool = |p: &str| {
            rados
                .ioctx(p)
                .unwrap()
                .list_prefix(&info.block_name_prefix)
                .unwrap()
                .len()
        };
        assert_eq!((in_pool(data), in_pool(meta)), (1, 0));
    }
    ceph::remove_image(&io, name).unwrap();
    let e = ceph::create_image_in(&io, name, 8 << 20, None, Some("cbt-no-such-pool"))
        .expect_err("no such data pool");
    assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
    let e = rados.pool_name(1 << 40).expect_err("no such pool id");
    assert!(matches!(e, ceph::CephError::NoSuchPool(_)), "{e}");
}

/// Connection settings come from $CEPH_CONF and $CEPH_ARGS as with the ceph CLI.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
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

/// Reaps every finished op of `q` until `n` have been reaped.
async fn reap(q: &mut ceph::CompletionQueue, n: usize) -> Vec<ceph::Reaped> {
    let mut out = Vec::new();
    while out.len() < n {
        std::future::poll_fn(|cx| q.poll_reap(cx, &mut out)).await;
    }
    out
}

/// The slot-based completion queue: writes and reads through slots, each op
/// reaped once with its slot and return value, read data in the slot's
/// buffer, slots reused; then a queue dropped with ops in flight waits for
/// them (their callbacks write into its slots).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn completion_queue_round_trip_and_drop_in_flight() {
    let _g = serial();
    let p = pool("cbt-layer");
    let rados = connect();
    let io = rados.ioctx(p).unwrap();
    let name = |i: usize| CString::new(format!("cbt_cq_{i}")).unwrap();
    rt().block_on(async {
        let mut q = ceph::CompletionQueue::new(4);
        for round in 0..3u8 {
            for slot in 0..4 {
                let data = vec![round * 16 + slot as u8; 4096];
                io.write_in(&mut q, slot, &name(slot), &data, 0).unwrap();
            }
            assert_eq!(q.in_flight(), 4);
            let mut done = reap(&mut q, 4).await;
            done.sort_by_key(|r| r.slot);
            assert_eq!(
                done.iter().map(|r| (r.slot, r.ret)).collect::<Vec<_>>(),
                vec![(0, 0), (1, 0), (2, 0), (3, 0)]
            );
        }
        for slot in 0..4 {
            *q.read_buf(slot) = vec![0u8; 8192];
            io.read_in(&mut q, slot, &name(slot), 0).unwrap();
        }
        for r in reap(&mut q, 4).await {
            assert_eq!(r.ret, 4096, "slot {}", r.slot);
            let want = 2 * 16 + r.slot as u8;
            assert!(q.read_buf(r.slot)[..4096].iter().all(|b| *b == want));
        }
        // A missing object: the errno comes back in the slot's result.
        *q.read_buf(0) = vec![0u8; 16];
        io.read_in(&mut q, 0, &CString::new("cbt_cq_none").unwrap(), 0)
            .unwrap();
        let r = reap(&mut q, 1).await;
        assert_eq!(r[0].ret, -i64::from(libc::ENOENT));
        // Dropped with 4 large writes in flight: the drop waits for them.
        let big = vec![9u8; 1 << 20];
        for slot in 0..4 {
            io.write_in(&mut q, slot, &name(slot), &big, 0).unwrap();
        }
        drop(q);
        for slot in 0..4 {
            let st = io.stat(&name(slot)).unwrap().await.unwrap();
            assert_eq!(st.buf.size, 1 << 20, "write of slot {slot} landed");
            io.remove(&name(slot)).unwrap().await.unwrap();
        }
    });
}

/// Zero-copy writes from a buffer Ceph reference-counts: the bytes land; the
/// buffer is refused for changes while an op holds it; a change after the
/// op (the stamp) reaches the OSD too, so no stale crc is sent; and a buffer
/// dropped while its op is in flight stays alive for the op (valgrind.sh
/// runs this test under memcheck).
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn shared_payload_writes_without_copy() {
    let _g = serial();
    let p = pool("cbt-layer");
    let rados = connect();
    let io = rados.ioctx(p).unwrap();
    let oid = CString::new("cbt_shared_obj").unwrap();
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    let limit = Duration::from_secs(60);
    rt().block_on(async {
        let mut q = ceph::CompletionQueue::new(2);
        let mut buf = ceph::SharedBuf::from_slice(&data).unwrap();
        io.write_shared_in(&mut q, 0, &oid, &buf, 0).unwrap();
        assert!(buf.shared(), "the op holds the buffer");
        assert!(buf.write_at(0, b"x").is_err(), "no change while held");
        let r = tokio::time::timeout(limit, reap(&mut q, 1)).await.unwrap();
        assert_eq!(r[0].ret, 0);
        let back = io.read(&oid, vec![0u8; 2 << 20], 0).unwrap().await.unwrap();
        assert_eq!(back.ret, 1 << 20);
        assert!(back.buf[..1 << 20] == data[..], "the payload as written");

        // Changed once the op let go of it: the change is what lands.
        let t0 = std::time::Instant::now();
        while buf.shared() {
            assert!(t0.elapsed() < limit, "Ceph kept the buffer");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        buf.write_at(8, b"STAMPED!").unwrap();
        io.write_shared_in(&mut q, 1, &oid, &buf, 0).unwrap();
        let r = tokio::time::timeout(limit, reap(&mut q, 1)).await.unwrap();
        assert_eq!(r[0].ret, 0);
        let back = io.read(&oid, vec![0u8; 16], 0).unwrap().await.unwrap();
        assert_eq!(&back.buf[8..16], b"STAMPED!");
        assert_eq!(&back.buf[..8], &data[..8]);

        // Dropped in flight: the op keeps its own reference.
        io.write_shared_in(&mut q, 0, &oid, &buf, 4096).unwrap();
        drop(buf);
        let r = tokio::time::timeout(limit, reap(&mut q, 1)).await.unwrap();
        assert_eq!(r[0].ret, 0);
        let st = io.stat(&oid).unwrap().await.unwrap();
        assert_eq!(st.buf.size, 4096 + (1 << 20));
        io.remove(&oid).unwrap().await.unwrap();
    });
}

/// RBD ops through the queue: writes from the slot's write buffer, reads
/// into its read buffer, and a flush.
#[test]
#[ignore = "needs a Ceph cluster: tests/run.sh runs it (cargo test -- --include-ignored)"]
fn completion_queue_on_an_image() {
    let _g = serial();
    let p = pool_for("cbt-rbd", "rbd");
    let rados = connect();
    let io = rados.ioctx(p).unwrap();
    let name = "cbt-layer-cq-image";
    let _ = ceph::remove_image(&io, name);
    ceph::create_image(&io, name, 4 << 20, Some(ceph::rbd::FEATURES[0].1)).unwrap();
    {
        let img = Image::open(&io, name).unwrap();
        rt().block_on(async {
            let mut q = ceph::CompletionQueue::new(2);
            *q.write_buf(0) = vec![0xA5; 4096];
            *q.write_buf(1) = vec![0x3C; 4096];
            img.write_in(&mut q, 0, 0).unwrap();
            img.write_in(&mut q, 1, 8192).unwrap();
            assert!(reap(&mut q, 2).await.iter().all(|r| r.ret >= 0));
            img.flush_in(&mut q, 0).unwrap();
            assert_eq!(reap(&mut q, 1).await[0].ret, 0);
            *q.read_buf(0) = vec![0; 4096];
            *q.read_buf(1) = vec![0; 4096];
            img.read_in(&mut q, 0, 8192).unwrap();
            img.read_in(&mut q, 1, 0).unwrap();
            assert!(reap(&mut q, 2).await.iter().all(|r| r.ret == 4096));
            assert!(q.read_buf(0).iter().all(|b| *b == 0x3C));
            assert!(q.read_buf(1).iter().all(|b| *b == 0xA5));
        });
    }
    ceph::remove_image(&io, name).unwrap();
}
