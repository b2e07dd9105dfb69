//! Coordinated multi-client runs: the watch/notify layer against the real
//! cluster, then `cephbench agent` processes driven by a controller.

mod common;

use std::ffi::CString;
use std::time::{Duration, SystemTime};

use cephbench::ceph::WatchEvent;
use common::{connect, pool, serial};

const POOL: &str = "cbt-multi";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A watcher that acks, one that does not: the reply names both, with the
/// gids and cookies of the watches and the acking one's payload.
#[test]
fn watch_notify_round_trip() {
    let _g = serial();
    let p = pool(POOL);
    let (a, b, c) = (connect(), connect(), connect());
    let (ioa, iob, ioc) = (
        a.ioctx(p).unwrap(),
        b.ioctx(p).unwrap(),
        c.ioctx(p).unwrap(),
    );
    let name = "cephbench_test_watch";
    let oid = CString::new(name).unwrap();
    rt().block_on(async {
        ioa.write_full(&oid, b"x")
            .unwrap()
            .await
            .unwrap()
            .check(|| "create".into())
            .unwrap();
        let mut wa = ioa.watch(name, Duration::from_secs(10)).unwrap();
        let wb = iob.watch(name, Duration::from_secs(10)).unwrap();
        let sent = SystemTime::now();
        let notify = ioc.notify(&oid, b"ping-payload", Duration::from_secs(3));
        let acker = async {
            let ev = wa.next_event().await.unwrap();
            let WatchEvent::Notify(n) = ev else {
                panic!("unexpected {ev:?}")
            };
            assert_eq!(n.payload, b"ping-payload");
            assert_eq!(n.cookie, wa.cookie());
            assert_eq!(n.notifier_id, c.instance_id());
            assert!(n.received_at >= sent - Duration::from_millis(1));
            wa.ack(n.notify_id, b"pong").unwrap();
        };
        let (reply, ()) = tokio::join!(notify, acker);
        let reply = reply.unwrap();
        assert!(reply.timed_out, "{reply:?}");
        assert_eq!(reply.acks.len(), 1, "{reply:?}");
        assert_eq!(reply.acks[0].gid, a.instance_id());
        assert_eq!(reply.acks[0].cookie, wa.cookie());
        assert_eq!(reply.acks[0].payload, b"pong");
        assert_eq!(reply.timeouts.len(), 1, "{reply:?}");
        assert_eq!(reply.timeouts[0].gid, b.instance_id());
        assert_eq!(reply.timeouts[0].cookie, wb.cookie());
        assert!(wa.check().is_ok());
        // Once dropped, the watches are gone: a notify completes at once, empty.
        drop(wb);
        drop(wa);
        let t = std::time::Instant::now();
        let reply = ioc.notify(&oid, b"", Duration::from_secs(3)).await.unwrap();
        assert!(
            !reply.timed_out && reply.acks.is_empty() && reply.timeouts.is_empty(),
            "{reply:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(2));
        // A watch on a missing object is an error with its errno.
        ioc.remove(&oid)
            .unwrap()
            .await
            .unwrap()
            .check(|| "rm".into())
            .unwrap();
        let e = ioa
            .watch(name, Duration::from_secs(10))
            .err()
            .expect("no object, no watch");
        assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
    });
}
