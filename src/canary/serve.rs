//! The `/metrics` endpoint: a plain HTTP/1.1 server on a thread of its own
//! (off the I/O loop), one request per connection, each bounded in time
//! and size. Prometheus asks a few times a minute; nothing more is needed.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::metrics::Metrics;

/// A request's head larger than this is refused.
const MAX_HEAD: usize = 8192;
/// A client that sends its request or reads the answer slower than this is dropped.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// Binds `addr` (the error names the address) and serves `metrics` there
/// on a thread until the process ends; returns the bound address (port 0
/// picks one).
pub fn start(addr: SocketAddr, metrics: Arc<Mutex<Metrics>>) -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind(addr)?;
    let bound = listener.local_addr()?;
    std::thread::Builder::new()
        .name("cephbench-metrics".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                let _ = answer(conn, &metrics);
            }
        })?;
    Ok(bound)
}

fn answer(mut conn: TcpStream, metrics: &Mutex<Metrics>) -> std::io::Result<()> {
    conn.set_read_timeout(Some(IO_TIMEOUT))?;
    conn.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = conn.read(&mut buf)?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (status, kind, body) = match (method, path.split('?').next().unwrap_or("")) {
        ("GET" | "HEAD", "/metrics") => {
            let text = metrics
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .render();
            ("200 OK", "text/plain; version=0.0.4; charset=utf-8", text)
        }
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "cephbench watch: the metrics are at /metrics\n".to_string(),
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: the metrics are at /metrics\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET\n".to_string(),
        ),
    };
    let body = if method == "HEAD" { "" } else { body.as_str() };
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, req: &str) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(req.as_bytes()).unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_metrics_and_refuses_the_rest() {
        let m = Arc::new(Mutex::new(Metrics::new("0.1.0", "3.0.0", &["p".into()])));
        let addr = start("127.0.0.1:0".parse().unwrap(), m).unwrap();
        let ok = get(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("text/plain; version=0.0.4"), "{ok}");
        let body = ok.split("\r\n\r\n").nth(1).unwrap();
        let len: usize = ok
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(body.len(), len);
        assert!(body.contains("cephbench_watch_up 0"), "{body}");
        assert!(get(addr, "GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(addr, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        // A head too large is dropped without an answer.
        let big = format!(
            "GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD)
        );
        let mut c = TcpStream::connect(addr).unwrap();
        let _ = c.write_all(big.as_bytes());
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        assert!(out.is_empty(), "{out}");
    }
}
