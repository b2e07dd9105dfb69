//! `diagnose` as text, Markdown, JSON and HTML: the ranked weak links first,
//! each with its evidence and its projected gain, then what was measured
//! (the page adds each job's own section, with its plots).
#![forbid(unsafe_code)]

use std::io;

use super::DiagnosisDoc;
use crate::explain::diagnosis::{Distortion, WeakLink};
use crate::explain::outliers::Outlier;
use crate::report::Format;

/// Writes `d` in `format` (the caller refuses CSV before running).
pub fn render(d: &DiagnosisDoc, format: Format, out: &mut dyn io::Write) -> io::Result<()> {
    match format {
        Format::Html => out.write_all(page(d).as_bytes()),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, d)?;
            writeln!(out)
        }
        Format::Markdown => {
            for l in lines(d, true) {
                writeln!(out, "{l}")?;
            }
            Ok(())
        }
        _ => {
            for l in lines(d, false) {
                writeln!(out, "{l}")?;
            }
            Ok(())
        }
    }
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

fn class(c: &str) -> String {
    if c.is_empty() {
        "no device class".into()
    } else {
        format!("class {c}")
    }
}

/// One weak link: what and where, its evidence, and its gain.
pub fn link_lines(l: &WeakLink, job: Option<&str>) -> (String, Vec<String>) {
    let job = job.unwrap_or("the QD1 write");
    let gain = |g: &Option<crate::result::projection::Projection>| match g {
        Some(p) => format!("fixed, {job}: {}", p.line()),
        None => format!("no projection: {job} did not measure the drives' flushes"),
    };
    match l {
        WeakLink::SlowDrives {
            osds,
            like_osd,
            gain: g,
        } => {
            let names: Vec<String> = osds.iter().map(|o| format!("osd.{}", o.osd)).collect();
            let head = match &names[..] {
                [one] => format!("{one}'s drive"),
                _ => format!("the drives of {}", names.join(", ")),
            };
            let mut ev: Vec<String> = osds.iter().map(outlier_line).collect();
            if let Some(o) = like_osd {
                ev.push(format!(
                    "the gain assumes osd.{o}'s drive, its class's median"
                ));
            }
            ev.push(gain(g));
            (head, ev)
        }
        WeakLink::SlowFlushes {
            median_commit_ns,
            osds,
            gain: g,
        } => (
            "every drive's flush (no power-loss protection?)".into(),
            vec![
                format!(
                    "the pool's {osds} OSDs commit a single write in {} (the median; a drive \
                     with power-loss protection commits one in well under 1 ms), none apart \
                     from the others",
                    ms(*median_commit_ns)
                ),
                gain(g),
            ],
        ),
        WeakLink::OsdCpu { job: j, osds } => (
            "the OSDs' CPU".into(),
            vec![
                format!(
                    "in '{j}': {}",
                    osds.iter()
                        .map(|(o, used, limit)| format!(
                            "osd.{o} used {used:.2} of the {limit:.2} cores it may use"
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "no projection: more or faster cores help only up to the next limit".into(),
            ],
        ),
    }
}

fn osds(list: &[i32]) -> String {
    list.iter()
        .map(|o| format!("osd.{o}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn grouped(groups: &[(String, Vec<i32>)]) -> String {
    groups
        .iter()
        .map(|(v, o)| format!("{v} ({})", osds(o)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One distortion in words.
pub fn distortion_line(x: &Distortion) -> String {
    match x {
        Distortion::MixedOpQueue { queues } => format!(
            "the OSDs run different op schedulers (osd_op_queue): {}; the figures mix them",
            grouped(queues)
        ),
        Distortion::MixedRelease { versions } => format!(
            "the OSDs run different versions: {}; the figures mix them",
            grouped(versions)
        ),
        Distortion::LowMclockCapacity { osd, iops } => format!(
            "osd.{osd}'s mClock capacity is {iops:.0} IOPS: mClock holds its client I/O to that, \
             an implausibly low figure (a startup bench on a busy drive can leave one: `ceph \
             config rm osd.{osd} osd_mclock_max_capacity_iops_hdd` (or _ssd) and a restart of \
             the OSD measure it again)"
        ),
        Distortion::NotQuiet { jobs, first } => format!(
            "the cluster was not quiet during {} of the jobs ({}): in '{}' {first}",
            jobs.len(),
            jobs.join(", "),
            jobs[0]
        ),
    }
}

fn outlier_line(o: &Outlier) -> String {
    format!(
        "osd.{} ({}): a single write commits in {}, {:.1}x its class's median {} (the OSD's \
         own bench, the median of its single writes)",
        o.osd,
        class(&o.class),
        ms(o.value),
        o.ratio,
        ms(o.median),
    )
}

/// Why nothing stands out: the figures that say so.
fn nothing_lines(d: &DiagnosisDoc) -> Vec<String> {
    let mut out = Vec::new();
    for c in &d.diagnosis.drives.classes {
        out.push(format!(
            "the drives ({}, {} OSDs): single-write commits at a median of {} (MAD {}), none \
             apart from the others",
            class(&c.class),
            c.osds,
            ms(c.median),
            ms(c.mad)
        ));
    }
    if let Some(job) = &d.diagnosis.projected_job {
        out.push(format!(
            "{job}: no fix the split can project gains {:.0} % or more",
            crate::explain::whatif::SHOWN_FROM * 100.0
        ));
    }
    out
}

/// The page: the same words as the text, the ranked list on top, then each
/// job's own section (its plots, its split, its OSDs).
pub fn page(d: &DiagnosisDoc) -> String {
    use crate::report::svg::esc;
    let mut h = crate::report::page::open_page(&format!("cephbench diagnose: pool {}", d.pool));
    h.push_str(&format!(
        "<p>cephbench {} · {:.0} s of a {:.0} s budget{}</p>\n",
        esc(&d.version),
        d.elapsed_s,
        d.budget_s,
        if d.interrupted {
            " · <span class=\"warn\">interrupted: what was found so far</span>"
        } else {
            ""
        }
    ));
    let list = |h: &mut String, items: &[String]| {
        h.push_str("<ul>");
        for i in items {
            h.push_str(&format!("<li>{}</li>", esc(i)));
        }
        h.push_str("</ul>\n");
    };
    let distortions = &d.diagnosis.distortions;
    if !distortions.is_empty() {
        h.push_str("<h2>Before trusting the figures</h2>\n");
        let items: Vec<String> = distortions.iter().map(distortion_line).collect();
        list(&mut h, &items);
    }
    let links = &d.diagnosis.weak_links;
    if links.is_empty() {
        h.push_str("<h2>Nothing stands out</h2>\n");
        list(&mut h, &nothing_lines(d));
    } else {
        h.push_str("<h2>Weak links, the largest gain first</h2>\n<ol>");
        for l in links {
            let (head, ev) = link_lines(l, d.diagnosis.projected_job.as_deref());
            h.push_str(&format!("<li><b>{}</b>", esc(&head)));
            list(&mut h, &ev);
            h.push_str("</li>");
        }
        h.push_str("</ol>\n");
    }
    h.push_str(
        "<h2>Measured</h2>\n<table><tr><th>job</th><th>IOPS</th><th>MiB/s</th>\
                <th>mean ms</th><th>p99 ms</th></tr>\n",
    );
    for r in d.runs.iter().flat_map(|s| &s.runs) {
        let Some(j) = r.result.jobs.first() else {
            continue;
        };
        h.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{:.0}</td><td class=\"n\">{:.2}</td>\
             <td class=\"n\">{:.3}</td><td class=\"n\">{:.3}</td></tr>\n",
            esc(&r.job),
            j.iops,
            j.bytes_per_sec / (1024.0 * 1024.0),
            j.latency_ns.mean / 1e6,
            j.latency_ns.p99 as f64 / 1e6
        ));
    }
    h.push_str("</table>\n");
    if let Some(l) = osd_checks_line(d) {
        h.push_str(&format!("<p>{}</p>\n", esc(&l)));
    }
    for (i, r) in d.runs.iter().flat_map(|s| &s.runs).enumerate() {
        crate::report::html::result_section(&mut h, i, true, &r.job, &r.result);
    }
    h.push_str("</body></html>\n");
    h
}

/// The report's lines (Markdown: headings and a table).
pub fn lines(d: &DiagnosisDoc, md: bool) -> Vec<String> {
    let mut out = vec![format!(
        "{}cephbench {} diagnose — pool '{}': {:.0} s of a {:.0} s budget{}",
        if md { "# " } else { "" },
        d.version,
        d.pool,
        d.elapsed_s,
        d.budget_s,
        if d.interrupted {
            " (interrupted: what was found so far)"
        } else {
            ""
        }
    )];
    let distortions = &d.diagnosis.distortions;
    if !distortions.is_empty() {
        out.push(String::new());
        out.push(format!(
            "{}Before trusting the figures:",
            if md { "## " } else { "" }
        ));
        out.extend(
            distortions
                .iter()
                .map(|x| format!("  - {}", distortion_line(x))),
        );
    }
    let links = &d.diagnosis.weak_links;
    out.push(String::new());
    if links.is_empty() {
        out.push(format!(
            "{}Nothing stands out:",
            if md { "## " } else { "" }
        ));
        out.extend(nothing_lines(d).into_iter().map(|l| format!("  - {l}")));
    } else {
        out.push(format!(
            "{}Weak links, the largest gain first:",
            if md { "## " } else { "" }
        ));
        for (i, l) in links.iter().enumerate() {
            let (head, ev) = link_lines(l, d.diagnosis.projected_job.as_deref());
            out.push(format!("{}. {head}", i + 1));
            out.extend(ev.into_iter().map(|e| format!("   - {e}")));
        }
    }
    out.push(String::new());
    out.extend(measured_lines(d, md));
    out
}

/// What was measured: a row per job, the OSDs' own checks, the cluster's
/// state.
fn measured_lines(d: &DiagnosisDoc, md: bool) -> Vec<String> {
    let mut out = vec![format!("{}Measured:", if md { "## " } else { "" })];
    let header = ["job", "IOPS", "MiB/s", "mean ms", "p99 ms"];
    let mut rows = Vec::new();
    for r in d.runs.iter().flat_map(|s| &s.runs) {
        let Some(j) = r.result.jobs.first() else {
            continue;
        };
        rows.push([
            r.job.clone(),
            format!("{:.0}", j.iops),
            format!("{:.2}", j.bytes_per_sec / (1024.0 * 1024.0)),
            format!("{:.3}", j.latency_ns.mean / 1e6),
            format!("{:.3}", j.latency_ns.p99 as f64 / 1e6),
        ]);
    }
    if md {
        out.push(format!("| {} |", header.join(" | ")));
        out.push("|---|---:|---:|---:|---:|".into());
        out.extend(rows.iter().map(|r| format!("| {} |", r.join(" | "))));
    } else {
        out.push(format!(
            "  {:<20} {:>8} {:>8} {:>9} {:>9}",
            header[0], header[1], header[2], header[3], header[4]
        ));
        out.extend(rows.iter().map(|r| {
            format!(
                "  {:<20} {:>8} {:>8} {:>9} {:>9}",
                r[0], r[1], r[2], r[3], r[4]
            )
        }));
    }
    if let Some(l) = osd_checks_line(d) {
        out.push(format!("{}{l}", if md { "\n" } else { "  " }));
    }
    out
}

/// Which OSDs checked themselves, and how many were left out.
fn osd_checks_line(d: &DiagnosisDoc) -> Option<String> {
    let b = d.osd_bench.as_ref()?;
    let checked: Vec<String> = b.osds.iter().map(|r| format!("osd.{}", r.osd)).collect();
    let mut l = format!(
        "the OSDs' own checks ({} single writes each): {}",
        b.probes,
        checked.join(", ")
    );
    if !d.osds_not_checked.is_empty() {
        l.push_str(&format!(
            "; not checked (the budget): {} of the pool's OSDs",
            d.osds_not_checked.len()
        ));
    }
    Some(l)
}
