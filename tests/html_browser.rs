//! The HTML report in a real browser: Debian's headless Chromium opens a
//! two-result page made by `cephbench report`, logs no console errors,
//! builds the expected number of non-empty `<svg>` plots, and renders a
//! screenshot in which the plots' colours appear; the same for a suite page
//! (`suite --pools ... --format html`, re-rendered from its saved document).
//!
//! The fixture is the one of `tests/report_snapshots.rs`, read back from its
//! JSON snapshot (the fixture serialized), plus a serialized histogram.
//! Without Chromium the test is skipped locally, and fails in CI (`CI` set):
//! `containers/install-deps.sh` installs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cephbench::result::BenchResult;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The snapshot tests' fixture, from its JSON snapshot.
fn fixture() -> BenchResult {
    let snap =
        include_str!("snapshots/report_snapshots__json_report_round_trips_and_matches_schema.snap");
    // insta's header: "---\n...\n---\n", then the document.
    let body = snap
        .splitn(3, "---\n")
        .nth(2)
        .expect("insta snapshot header");
    serde_json::from_str(body).expect("the JSON snapshot is a result")
}

fn chromium() -> Option<&'static str> {
    if Path::new(CHROMIUM).exists() {
        return Some(CHROMIUM);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{CHROMIUM} is missing in CI: containers/install-deps.sh must install `chromium`");
    }
    eprintln!(
        "SKIPPED html_browser: {CHROMIUM} is not installed (apt-get install chromium, \
         or run containers/install-deps.sh); in CI this test fails instead"
    );
    None
}

/// Runs headless Chromium on `page` with a fresh profile, bounded by 90 s.
fn run_chromium(bin: &str, page: &Path, extra: &[&str]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("timeout")
        .args(["-k", "5", "90", bin])
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `cephbench report --format html -o page FILES...`, which must succeed.
fn report_html(page: &Path, files: &[&Path]) {
    let out = assert_cmd::Command::cargo_bin("cephbench")
        .unwrap()
        .args(["report", "--format", "html", "-o"])
        .arg(page)
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The page's console messages as Chromium logs them (`INFO:CONSOLE...`),
/// and uncaught exceptions.
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// `<svg>` elements of a DOM that hold at least one drawn shape.
fn non_empty_svgs(dom: &str) -> (usize, usize) {
    let mut total = 0;
    let mut drawn = 0;
    for part in dom.split("<svg").skip(1) {
        total += 1;
        let body = part.split("</svg>").next().unwrap_or("");
        if ["<polyline", "<rect", "<circle", "<path"]
            .iter()
            .any(|s| body.contains(s))
        {
            drawn += 1;
        }
    }
    (total, drawn)
}

/// The texts of every `<svg>` of `page` that overlap another of the same
/// plot, as Chromium lays them out (its fonts, its boxes): a copy of the
/// page with a script that compares each pair of `<text>` boxes and writes
/// the pairs into the DOM that `--dump-dom` prints. Boxes touching by at
/// most a pixel do not count.
fn overlapping_labels(bin: &str, page: &Path) -> Vec<String> {
    const PROBE: &str = r#"<pre id="overlaps"></pre><script>
(function () {
  var out = [];
  document.querySelectorAll('svg').forEach(function (svg, n) {
    var texts = Array.prototype.slice.call(svg.querySelectorAll('text'))
      .filter(function (t) { return t.textContent.trim() !== ''; });
    var boxes = texts.map(function (t) { return t.getBoundingClientRect(); });
    for (var i = 0; i < texts.length; i++) {
      for (var j = i + 1; j < texts.length; j++) {
        var p = boxes[i], q = boxes[j];
        if (p.left < q.right - 1 && q.left < p.right - 1 &&
            p.top < q.bottom - 1 && q.top < p.bottom - 1) {
          out.push('plot ' + n + ': "' + texts[i].textContent + '" / "' +
                   texts[j].textContent + '"');
        }
      }
    }
  });
  document.getElementById('overlaps').textContent = JSON.stringify(out);
})();
</script></body>"#;
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("</body>"), "no </body> in {}", page.display());
    let probed = page.with_extension("probe.html");
    std::fs::write(&probed, html.replacen("</body>", PROBE, 1)).unwrap();
    let out = run_chromium(bin, &probed, &["--dump-dom", "--window-size=1200,3000"]);
    let dom = String::from_utf8_lossy(&out.stdout);
    let json = dom
        .split("<pre id=\"overlaps\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe wrote nothing: {dom}"));
    let json = json
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// A decoded 8-bit RGB/RGBA PNG: (width, height, RGB pixels).
fn decode_png(bytes: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    use std::io::Read;
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut w, mut h, mut channels) = (0usize, 0usize, 0usize);
    let mut idat = Vec::new();
    let mut pos = 8;
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into().unwrap()) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let data = &bytes[pos + 8..pos + 8 + len];
        match kind {
            b"IHDR" => {
                w = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
                h = u32::from_be_bytes(data[4..8].try_into().unwrap()) as usize;
                assert_eq!(data[8], 8, "bit depth");
                channels = match data[9] {
                    2 => 3,
                    6 => 4,
                    t => panic!("PNG colour type {t}"),
                };
                assert_eq!(data[12], 0, "interlaced PNG");
            }
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        pos += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = w * channels;
    assert_eq!(raw.len(), h * (stride + 1), "PNG data size");
    let mut prev = vec![0u8; stride];
    let mut px = Vec::with_capacity(w * h);
    for row in raw.chunks(stride + 1) {
        let (filter, line) = (row[0], &row[1..]);
        let mut cur = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let pred = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("PNG filter {f}"),
            };
            cur[i] = line[i].wrapping_add(pred);
        }
        for p in cur.chunks(channels) {
            px.push([p[0], p[1], p[2]]);
        }
        prev = cur;
    }
    (w, h, px)
}

fn hex(c: &str) -> [u8; 3] {
    let v = u32::from_str_radix(c.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

#[test]
fn html_report_renders_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut a = fixture();
    let mut rec = cephbench::stats::LatencyRecorder::new();
    for i in 1..=12_000u64 {
        rec.record(10_000_000 + (i * 7919) % 6_000_000);
    }
    a.jobs[0].latency_ns = rec.summary();
    a.jobs[0].histogram = Some(cephbench::stats::encode_histogram(rec.histogram()));
    let mut b = fixture();
    b.jobs[0].iops *= 2.0;
    b.jobs[0].latency_ns.mean /= 2.0;
    if let cephbench::result::Workload::Rados(w) = &mut b.workload {
        w.pool = "<script>console.error('escaped?')</script>".into();
    }
    let (pa, pb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&pa, serde_json::to_vec(&a).unwrap()).unwrap();
    std::fs::write(&pb, serde_json::to_vec(&b).unwrap()).unwrap();
    let page: PathBuf = dir.path().join("page.html");
    report_html(&page, &[&pa, &pb]);

    // The harness sees console errors when there are some.
    let bad = dir.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><script>console.error('boom'); nope();</script></body></html>",
    )
    .unwrap();
    let out = run_chromium(bin, &bad, &["--dump-dom"]);
    let lines = console_lines(&out.stderr);
    assert!(
        lines.iter().any(|l| l.contains("boom")) && lines.iter().any(|l| l.contains("Uncaught")),
        "the console check must catch errors: {lines:?}"
    );

    // The report: no console output at all, and every plot drawn. Per result:
    // 1 job x (percentile curve + IOPS, mean and p50/p99 timelines) +
    // attribution + per-OSD bars + the OSDs' counter timeline and their CPU
    // per interval = 8; plus 2 comparison charts.
    let out = run_chromium(bin, &page, &["--dump-dom"]);
    let lines = console_lines(&out.stderr);
    assert!(lines.is_empty(), "console messages: {lines:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("</html>"), "no DOM dumped: {dom}");
    assert!(!dom.contains("<script"), "the pool name became a script");
    let expected = 2 * (4 + 1 + 1 + 2) + 2;
    assert_eq!(non_empty_svgs(&dom), (expected, expected));
    let o = overlapping_labels(bin, &page);
    assert!(o.is_empty(), "labels overlap: {o:#?}");

    // The screenshot: the right size, mostly white page with the plots'
    // colours in it (series A's blue and B's orange fill whole bars).
    let shot = dir.path().join("shot.png");
    run_chromium(
        bin,
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,3000",
        ],
    );
    let (w, h, px) = decode_png(&std::fs::read(&shot).unwrap());
    assert_eq!((w, h), (1200, 3000));
    let white = px.iter().filter(|p| **p == [255, 255, 255]).count();
    let inked = px.len() - white;
    assert!(
        inked > px.len() / 50 && white > px.len() / 4,
        "blank or all-ink screenshot: {inked} of {} pixels not white",
        px.len()
    );
    for c in [
        cephbench::report::svg::PALETTE[0],
        cephbench::report::svg::PALETTE[1],
    ] {
        let want = hex(c);
        let n = px.iter().filter(|p| **p == want).count();
        eprintln!(
            "screenshot: {n} pixels of {c}, {inked} of {} not white",
            px.len()
        );
        assert!(n > 2000, "plot colour {c} on only {n} pixels");
    }
}

/// A suite of two runs of the fixture on two pools, as `suite --pools`
/// writes it (`{"suites": [...], "comparison": ...}`).
fn suite_pools_doc() -> serde_json::Value {
    use cephbench::suite::{self, RunEntry, SuiteDoc, SuiteSettings};
    let doc = |pool: &str, scale: f64| {
        let runs: Vec<RunEntry> = (1..=2)
            .map(|run| {
                let mut r = fixture();
                r.jobs[0].iops *= scale * (1.0 + 0.05 * f64::from(run));
                r.jobs[0].bytes_per_sec *= scale;
                RunEntry {
                    job: "4k write QD16".into(),
                    run,
                    result: r,
                }
            })
            .collect();
        let order = vec!["4k write QD16".to_string()];
        SuiteDoc {
            suite_schema_version: suite::SUITE_SCHEMA_VERSION,
            suite: "rados".into(),
            source: "built-in".into(),
            pool: pool.into(),
            data_pool: None,
            settings: SuiteSettings {
                runs: 2,
                runtime_s: 10.0,
                ramp_s: 2.0,
                image_size: 0,
                test_area: 0,
                telemetry: true,
                aggregate: Default::default(),
            },
            pool_settings: None,
            started_unix: 1_700_000_000,
            elapsed_s: 30.0,
            interrupted: false,
            summary: suite::summarize(&order, &runs, None, Default::default()),
            runs,
        }
    };
    let docs = vec![doc("consumer", 1.0), doc("plp", 3.0)];
    let c = suite::compare_suites(&docs);
    serde_json::json!({"suites": docs, "comparison": c})
}

/// `suite --format html` as `cephbench report` renders a saved `--pools`
/// document: no console output, every plot drawn, both pools' colours on
/// the screenshot.
#[test]
fn suite_html_page_renders_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("pools.json");
    std::fs::write(&saved, serde_json::to_vec(&suite_pools_doc()).unwrap()).unwrap();
    let page = dir.path().join("suite.html");
    report_html(&page, &[&saved]);
    let out = run_chromium(bin, &page, &["--dump-dom"]);
    let lines = console_lines(&out.stderr);
    assert!(lines.is_empty(), "console messages: {lines:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("consumer") && dom.contains("plp"), "{dom}");
    let (total, drawn) = non_empty_svgs(&dom);
    assert!(
        total >= 3 && drawn == total,
        "{drawn} of {total} plots drawn"
    );
    let o = overlapping_labels(bin, &page);
    assert!(o.is_empty(), "labels overlap: {o:#?}");
    let shot = dir.path().join("suite.png");
    run_chromium(
        bin,
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,2000",
        ],
    );
    let (_, _, px) = decode_png(&std::fs::read(&shot).unwrap());
    for c in [
        cephbench::report::svg::PALETTE[0],
        cephbench::report::svg::PALETTE[1],
    ] {
        let want = hex(c);
        let n = px.iter().filter(|p| **p == want).count();
        assert!(n > 500, "plot colour {c} on only {n} pixels");
    }
    std::fs::copy(&shot, std::env::temp_dir().join("cephbench-suite-page.png")).ok();
}

/// A disruption run's page (a real run on pacific: `--disrupt
/// osd.1:out@3s,in@8s`, a 14 s 4 KiB write on a size-3 pool): no label of
/// any plot overlaps another as Chromium lays them out (the osdmap change
/// seen from 0 s was drawn over the y axis's "0"); the two-result page and
/// the suite page are checked in their own tests.
#[test]
fn a_disruption_page_has_no_overlapping_labels() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("disrupt.html");
    let run = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/run-disrupt-out-in-pacific.json");
    report_html(&page, &[&run]);
    let dom =
        String::from_utf8_lossy(&run_chromium(bin, &page, &["--dump-dom"]).stdout).to_string();
    assert!(dom.contains("osd.1 out at"), "the marks are drawn: {dom}");
    let o = overlapping_labels(bin, &page);
    assert!(o.is_empty(), "labels overlap: {o:#?}");
}

/// `diagnose --format html`'s page, from a real diagnosis on pacific (3
/// bluestore OSDs, size 3, `--budget 1m`: nothing stands out, the first job
/// ran while the new pool's PGs were peering): the verdict on top, the
/// measured table, then each job's section with its plots; Chromium logs
/// nothing, draws every plot, and no label overlaps another.
#[test]
fn a_diagnose_page_has_its_verdict_on_top_and_draws_every_job() {
    let doc: cephbench::diagnose::DiagnosisDoc =
        serde_json::from_str(include_str!("fixtures/diagnose-nothing-pacific.json"))
            .expect("the fixture is a diagnosis");
    let mut html = Vec::new();
    cephbench::diagnose::report::render(&doc, cephbench::report::Format::Html, &mut html).unwrap();
    let html = String::from_utf8(html).unwrap();
    let at = |s: &str| {
        html.find(s)
            .unwrap_or_else(|| panic!("no '{s}' in the page"))
    };
    // The verdict and what distorts it before the figures, the jobs after.
    assert!(at("Before trusting the figures") < at("Nothing stands out"));
    assert!(at("Nothing stands out") < at("<h2>Measured</h2>"));
    let jobs = doc.runs.as_ref().map_or(0, |r| r.runs.len());
    assert_eq!(jobs, 4);
    assert_eq!(
        html.matches("<section><h2>").count(),
        jobs,
        "a section per job"
    );
    assert!(at("<h2>Measured</h2>") < at("<section><h2>"));
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("diagnose.html");
    std::fs::write(&page, &html).unwrap();
    let out = run_chromium(bin, &page, &["--dump-dom"]);
    let lines = console_lines(&out.stderr);
    assert!(lines.is_empty(), "console messages: {lines:?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    let (total, drawn) = non_empty_svgs(&dom);
    assert!(
        total >= 4 * jobs && drawn == total,
        "{drawn} of {total} plots drawn"
    );
    let o = overlapping_labels(bin, &page);
    assert!(o.is_empty(), "labels overlap: {o:#?}");
    let shot = dir.path().join("diagnose.png");
    run_chromium(
        bin,
        &page,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,1600",
        ],
    );
    assert!(shot.exists());
}
