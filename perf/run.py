#!/usr/bin/env python3
"""cephbench against its peers, alternated A B A B and B A B A on one cluster (called by perf/run.sh).

Environment (set by run.sh): CEPH_CONF, CB (cephbench binary), BARE (bare_aio example),
PAIRS, SECS, QUICK (1 = CI subset), LONG (seconds of the long run of the RSS check, 0 = skip),
MEMORY_ONLY (1 = only the RSS check), OUT (JSON path), IMAGE_SIZE (MiB), STORE (label for the table),
BASELINE (another cephbench binary, e.g. an older build: added as a peer of every workload, so
before/after come from one run), ONLY (regex: run only the workloads whose name matches), PEERS (regex:
only the peers whose name matches).
Every tool's client CPU seconds (user + sys) and peak RSS come from its own rusage, read with
wait4(2) (microseconds; /usr/bin/time rounds to 10 ms, 1-2 % of a short run's CPU). SHORT (seconds, default SECS/5): each pair also runs every tool for
SHORT seconds, and the steady-state CPU per op is (CPU of the SECS run - CPU of the SHORT run) /
(ops of the SECS run - ops of the SHORT run): start-up, connect, probes and teardown cancel out.
"""
import atexit, json, math, os, re, shutil, statistics, subprocess, sys, tempfile, time

CONF = os.environ.get("CEPH_CONF", "")
CB = os.environ.get("CB", "")
BARE = os.environ.get("BARE", "")
PAIRS = int(os.environ.get("PAIRS", "4"))
SECS = int(os.environ.get("SECS", "10"))
SHORT = int(os.environ.get("SHORT") or max(1, SECS // 5))
QUICK = os.environ.get("QUICK") == "1"
LONG = int(os.environ.get("LONG", "0"))
OUT = os.environ.get("OUT", "perf/results.json")
IMG_MB = int(os.environ.get("IMAGE_SIZE", "256"))
STORE = os.environ.get("STORE", "?")
MEMORY_ONLY = os.environ.get("MEMORY_ONLY") == "1"
BASELINE = os.environ.get("BASELINE") or None
ONLY = os.environ.get("ONLY") or None
PEERS = os.environ.get("PEERS") or None
NO_TEL = "cephbench --no-telemetry"
TAG = f"cbperf{os.getpid()}"
RPOOL, BPOOL = f"{TAG}_rados", f"{TAG}_rbd"
IMAGE = "cbperf_img"
TMP = tempfile.mkdtemp(prefix="cbperf.")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
FIO_CONF = os.path.join(TMP, "ceph.conf")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, env=None, check=True, timeout=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-800:]}")
    return p


def timed(cmd, env=None, secs=None):
    """Runs cmd (a run of `secs`, default SECS) under `timeout`; returns (stdout, cpu_s, rss_kib) from the
    rusage wait4(2) gives for it (its own and every descendant's it waited for: `timeout` waits for cmd)."""
    with tempfile.TemporaryFile(mode="w+") as out, tempfile.TemporaryFile(mode="w+") as err:
        p = subprocess.Popen(["timeout", str((secs or SECS) * 4 + 120)] + cmd, stdout=out, stderr=err, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = rc = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if rc != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed ({rc}): {stderr.strip()[-800:]}")
    return stdout, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def ceph(*a, check=True):
    return sh(["ceph", "-c", CONF, "--connect-timeout", "20"] + list(a), check=check, timeout=120)


# ---- tools: each returns dict(ops, secs, iops, mean_us, p99_us|None, cpu_s, rss_kib)

def cephbench_rados(mode, bs, qd, run, secs=None, extra=(), binary=None):
    keep = ["--no-cleanup"] if mode == "write" and "--no-cleanup" not in extra else []
    out, cpu, rss = timed([binary or CB, "rados", mode, "-c", CONF, "-p", RPOOL, "-b", str(bs), "-t", str(qd),
                           "-d", f"{secs or SECS}s", "--run-name", run, "--progress", "never",
                           "--format", "json", *extra, *keep], secs=secs)
    j = json.loads(out)["jobs"][0]
    if mode == "write" and "--no-cleanup" not in extra:
        # Not timed: every tool's write objects are removed after its run (see bare).
        sh([binary or CB, "cleanup", "-c", CONF, "-p", RPOOL, "--run-name", run])
    return dict(ops=j["ops"], secs=j["elapsed_s"], iops=j["iops"], mean_us=j["latency_ns"]["mean"] / 1e3,
                p99_us=j["latency_ns"]["p99"] / 1e3, cpu_s=cpu, rss_kib=rss)


def cephbench_rbd(rw, bs, qd, binary=None, secs=None, extra=()):
    out, cpu, rss = timed([binary or CB, "rbd", "-c", CONF, "-p", BPOOL, "--image", IMAGE, "--allow-write",
                           "--no-precondition", "--rw", rw, "--bs", str(bs), "--iodepth", str(qd),
                           "-d", f"{secs or SECS}s", "--progress", "never", "--format", "json", *extra], secs=secs)
    j = json.loads(out)["jobs"][0]
    return dict(ops=j["ops"], secs=j["elapsed_s"], iops=j["iops"], mean_us=j["latency_ns"]["mean"] / 1e3,
                p99_us=j["latency_ns"]["p99"] / 1e3, cpu_s=cpu, rss_kib=rss)


def rados_bench(mode, bs, qd, run, extra=(), secs=None):
    keep = ["--no-cleanup"] if mode == "write" and "--no-cleanup" not in extra else []
    out, cpu, rss = timed(["rados", "-c", CONF, "-p", RPOOL, "bench", str(secs or SECS), mode,
                           *(["-b", str(bs)] if mode == "write" else []), "-t", str(qd), "--run-name", run, *extra,
                           *keep], secs=secs)
    if keep:  # not timed, as for every tool
        sh(["rados", "-c", CONF, "-p", RPOOL, "cleanup", "--run-name", run], timeout=600)

    def f(name):
        m = re.search(rf"^{re.escape(name)}\s*(\S+)", out, re.M)
        if not m:
            raise SystemExit(f"bench: no '{name}' in rados bench output:\n{out}")
        return float(m.group(1))
    ops = f("Total writes made:" if mode == "write" else "Total reads made:")
    t = f("Total time run:")
    return dict(ops=ops, secs=t, iops=ops / t, mean_us=f("Average Latency(s):") * 1e6, p99_us=None,
                cpu_s=cpu, rss_kib=rss)


def rbd_bench(pattern, bs, qd, iops_hint, secs=None):
    # rbd bench has no duration: size --io-total from cephbench's IOPS in the same pair.
    total = max(int(iops_hint * (secs or SECS)), qd * 4) * bs
    io_type = "write" if pattern == "randwrite" else "read"
    out, cpu, rss = timed(["rbd", "-c", CONF, "--rbd-cache=false", "bench", "--io-type", io_type,
                           "--io-pattern", "rand", "--io-size", str(bs), "--io-threads", str(qd),
                           "--io-total", str(total), f"{BPOOL}/{IMAGE}"], secs=secs)
    m = re.search(r"elapsed:\s*([\d.]+)\s+ops:\s*(\d+)\s+ops/sec:\s*([\d.]+)", out)
    if not m:
        raise SystemExit(f"bench: no summary in rbd bench output:\n{out}")
    ops = float(m.group(2))
    iops = float(m.group(3))
    return dict(ops=ops, secs=ops / iops, iops=iops, mean_us=None, p99_us=None, cpu_s=cpu, rss_kib=rss)


# fio's rados object for writes, MiB; cephbench's 4 KiB write runs paired with fio write into objects of
# this size too (-O), so both lay their ops out alike: sequential offsets in one fresh object per run.
FIO_OBJECT_MIB = 128
FIO_LAYOUT = f"fio rados (both in {FIO_OBJECT_MIB} MiB objects)"


def fio(engine, rw, bs, qd, target, secs=None):
    args = ["fio", "--name=peer", f"--ioengine={engine}", "--clientname=admin", f"--rw={rw}",
            f"--bs={bs}", f"--iodepth={qd}", "--time_based", f"--runtime={secs or SECS}", "--output-format=json"]
    if engine == "rbd":
        args += [f"--pool={BPOOL}", f"--rbdname={target}", "--direct=1"]
    else:
        # One object (fio's rados engine puts every op of a job on its one "file"), no larger than the OSD's
        # osd_max_object_size (128 MiB by default): fio never reads an op's return value, so writes past it
        # fail with EFBIG and still count as done (a 256 MiB object once made fio look 1.6x faster at 4 MiB).
        # Reads read the 64 MiB object setup() wrote. A write run starts from no object, as cephbench's do
        # (fio 3.33 leaves its object behind: the next run would overwrite allocated extents instead).
        args += [f"--pool={RPOOL}", f"--conf={FIO_CONF}", f"--filename={target}",
                 f"--size={FIO_OBJECT_MIB if 'write' in rw else 64}M"]
        if "write" in rw:
            sh(["rados", "-c", CONF, "-p", RPOOL, "rm", target], check=False)
    env = dict(os.environ, CEPH_CONF=FIO_CONF)
    out, cpu, rss = timed(args, env=env, secs=secs)
    v = json.loads(out[out.index("{"):])
    s = v["jobs"][0]["read" if "read" in rw else "write"]
    return dict(ops=s["total_ios"], secs=s["runtime"] / 1e3 if s["runtime"] else secs or SECS, iops=s["iops"],
                mean_us=s["clat_ns"]["mean"] / 1e3,
                p99_us=s["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e3 or None,
                cpu_s=cpu, rss_kib=rss)


def bare(mode, bs, qd, run=None, secs=None, keep=False):
    args = [BARE, "--conf", CONF, "--mode", mode, "--bs", str(bs), "--qd", str(qd),
            "--secs", str(secs or SECS)]
    args += ["--pool", BPOOL, "--image", IMAGE] if mode.startswith("rbd") else ["--pool", RPOOL, "--run-name", run]
    out, cpu, rss = timed(args, secs=secs)
    j = json.loads(out)
    if mode == "write" and not keep:
        # Not timed, as for every tool: each write run's objects are removed after it, so client CPU per op
        # is the I/O's alone (removal costs about as much as the writes) and memstore OSDs do not fill up.
        sh([BARE, "--conf", CONF, "--pool", RPOOL, "--mode", "remove", "--run-name", run])
    return dict(ops=j["ops"], secs=j["secs"], iops=j["iops"], mean_us=j["mean_us"], p99_us=j["p99_us"],
                cpu_s=cpu, rss_kib=rss)


# ---- workloads: (name, cephbench fn, {peer: fn(cb_result)}, setup)

K4, M4 = 4096, 4 << 20


def workloads():
    w = []
    # Every function takes the run's length (secs): the long run and the short one of the steady-state CPU.
    for qd in (1, 16):
        peers = {
            "rados bench": lambda c, secs, qd=qd: rados_bench("write", K4, qd, "rbw", secs=secs),
            # cephbench in fio's layout for this pair (a peer given as (cephbench run, peer run)).
            FIO_LAYOUT: (lambda secs, qd=qd: cephbench_rados("write", K4, qd, "cbw", secs=secs,
                                                              extra=["-O", f"{FIO_OBJECT_MIB}M"]),
                         lambda c, secs, qd=qd: fio("rados", "write", K4, qd, "cbperf_fio_w", secs=secs)),
            "bare aio": lambda c, secs, qd=qd: bare("write", K4, qd, "bw", secs=secs),
        }
        # The cost of telemetry: the same run with it off (at QD1 its per-second work weighs most per op).
        peers[NO_TEL] = lambda c, secs, qd=qd: cephbench_rados("write", K4, qd, "cbw", secs=secs,
                                                               extra=["--no-telemetry"])
        w.append((f"RADOS 4K write QD{qd}",
                  lambda secs, qd=qd, b=None: cephbench_rados("write", K4, qd, "cbw", secs=secs, binary=b),
                  peers, SECS))
    w.append(("RADOS 4K randread QD16",
              lambda secs, b=None: cephbench_rados("rand", K4, 16, "cbpre", secs=secs, binary=b), {
        "rados bench": lambda c, secs: rados_bench("rand", K4, 16, "rbpre", secs=secs),
        "fio rados": lambda c, secs: fio("rados", "randread", K4, 16, "cbperf_fio_r", secs=secs),
        "bare aio": lambda c, secs: bare("rand", K4, 16, "bpre", secs=secs),
        # The cost of checking reads (stamp by default): the same run unchecked, and fully compared.
        "cephbench --no-verify": lambda c, secs: cephbench_rados("rand", K4, 16, "cbpre", secs=secs,
                                                                 extra=["--no-verify"]),
        "cephbench --verify=full": lambda c, secs: cephbench_rados("rand", K4, 16, "cbpre", secs=secs,
                                                                   extra=["--verify=full"]),
    }, SECS))
    # memstore keeps 4 GiB per OSD and every OSD of a size-3 pool holds a copy: 4 MiB runs last at most
    # 4 s there, so one run's objects fit (each tool removes its own before the next run starts).
    s4m = min(SECS, 4) if STORE == "memstore" else SECS
    w.append(("RADOS 4M write QD16",
              lambda secs, b=None: cephbench_rados("write", M4, 16, "cbw4m", secs=secs, binary=b), {
        "rados bench": lambda c, secs: rados_bench("write", M4, 16, "rbw4m", secs=secs),
        "fio rados": lambda c, secs: fio("rados", "write", M4, 16, "cbperf_fio_w4m", secs=secs),
        "bare aio": lambda c, secs: bare("write", M4, 16, "bw4m", secs=secs),
    }, s4m))
    for rw in ("randwrite", "randread"):
        # Each pair draws offsets alike: rbd bench and the bare loop pick each block uniformly, with repeats,
        # so cephbench runs with --norandommap against them; fio (and cephbench by default) visit each block
        # once per pass. It matters: repeats hit the OSDs' caches, and cephbench's random map against the
        # bare loop's repeats read 6-10 % slower on a 3-OSD bluestore cluster (docs/performance.md).
        uniform = (lambda secs, rw=rw: cephbench_rbd(rw, K4, 32, secs=secs, extra=["--norandommap"]))
        w.append((f"RBD 4K {rw} QD32", lambda secs, rw=rw, b=None: cephbench_rbd(rw, K4, 32, secs=secs, binary=b), {
            "rbd bench": (uniform, lambda c, secs, rw=rw: rbd_bench(rw, K4, 32, c["iops"], secs=secs)),
            "fio rbd": lambda c, secs, rw=rw: fio("rbd", rw, K4, 32, IMAGE, secs=secs),
            "bare aio": (uniform, lambda c, secs, rw=rw: bare(f"rbd-{rw}", K4, 32, secs=secs)),
        }, SECS))
    if BASELINE:
        for _, ours, peers, _ in w:
            peers["cephbench baseline"] = lambda c, secs, ours=ours: ours(secs, b=BASELINE)
    if QUICK:  # CI: one RADOS workload (the bare loop) and one RBD workload (rbd bench)
        w = [w[1], w[5]]
        w[0] = (w[0][0], w[0][1], {k: v for k, v in w[0][2].items() if k == "bare aio"}, w[0][3])
        w[1] = (w[1][0], w[1][1], {k: v for k, v in w[1][2].items() if k == "rbd bench"}, w[1][3])
    if ONLY:
        w = [x for x in w if re.search(ONLY, x[0])]
    if PEERS:
        w = [(n, o, {k: v for k, v in p.items() if re.search(PEERS, k)}, s) for n, o, p, s in w]
    if MEMORY_ONLY:
        w = []
    return w


def create_pool(name, app):
    """The pool with 32 PGs, or 16 or 8 where the cluster's PG budget (mon_max_pg_per_osd x OSDs, which
    other pools use up) has no room for 32: the mons refuse those with ERANGE. Says which it took."""
    for pgs in ("32", "16", "8"):
        p = ceph("osd", "pool", "create", name, pgs, check=False)
        if p.returncode == 0:
            if pgs != "32":
                print(f"bench: pool {name} with {pgs} PGs (the cluster's PG budget has no room for 32)",
                      file=sys.stderr)
            break
        if "ERANGE" not in p.stderr or pgs == "8":
            raise SystemExit(f"bench: ceph osd pool create {name} {pgs} failed ({p.returncode}): "
                             f"{p.stderr.strip()[-800:]}")
    ceph("osd", "pool", "application", "enable", name, app)


def setup():
    create_pool(RPOOL, "rados")
    create_pool(BPOOL, "rbd")
    sh(["rbd", "-c", CONF, "create", "--size", f"{IMG_MB}M", f"{BPOOL}/{IMAGE}"])
    with open(CONF) as f, open(FIO_CONF, "w") as g:
        g.write(f.read() + "\n[client]\n\trbd cache = false\n")
    if MEMORY_ONLY:
        return
    log(f"bench: preconditioning ({IMG_MB} MiB image, read objects)")
    sh([CB, "rbd", "-c", CONF, "-p", BPOOL, "--image", IMAGE, "--allow-write", "--no-precondition",
        "--rw", "write", "--bs", "4M", "--io-total", f"{IMG_MB}M", "--iodepth", "8", "--progress", "never",
        "--format", "json"])
    pre = max(2, SECS)
    cephbench_rados("write", K4, 16, "cbpre", secs=pre, extra=["--no-cleanup"])
    sh(["rados", "-c", CONF, "-p", RPOOL, "bench", str(pre), "write", "-b", str(K4), "-t", "16",
        "--run-name", "rbpre", "--no-cleanup"])
    bare("write", K4, 16, "bpre", secs=pre, keep=True)
    env = dict(os.environ, CEPH_CONF=FIO_CONF)
    sh(["fio", "--name=pre", "--ioengine=rados", "--clientname=admin", f"--pool={RPOOL}",
        f"--conf={FIO_CONF}", "--filename=cbperf_fio_r", "--size=64M", "--rw=write", "--bs=4M", "--iodepth=4"], env=env)


def teardown():
    ceph("osd", "pool", "rm", RPOOL, RPOOL, "--yes-i-really-really-mean-it", check=False)
    ceph("osd", "pool", "rm", BPOOL, BPOOL, "--yes-i-really-really-mean-it", check=False)


def marginal_us(short, long_):
    """Steady-state client CPU per op, us, from two runs of one tool: the CPU the long run spent beyond
    the short one, over the ops it did beyond it (start-up, connect, probes, teardown cancel out).
    None without a short run, or when the long run did not do more ops."""
    if short is None or long_ is None:
        return None
    d_ops = long_["ops"] - short["ops"]
    if d_ops <= 0:
        return None
    return (long_["cpu_s"] - short["cpu_s"]) / d_ops * 1e6


def run_pair(ours, theirs, long_s, short_s, peer_first=False, hint=None):
    """One A/B pair: each tool's short run (when short_s), then each tool's long run, alternated
    (A B A B, or B A B A with peer_first: the pairs of a row alternate which tool goes first, so a
    cluster that drifts or favours the second run weighs on both alike); returns the long runs, each
    with its steady-state CPU per op (`steady_us`). A peer that needs cephbench's run (rbd bench sizes
    its --io-total from its IOPS) gets `hint`, cephbench's last run, when it goes first."""
    cs = ps = None
    if peer_first:
        if short_s:
            ps = theirs(hint, short_s)
            cs = ours(short_s)
        p = theirs(hint if cs is None else cs, long_s)
        c = ours(long_s)
    else:
        if short_s:
            cs = ours(short_s)
            ps = theirs(cs, short_s)
        c = ours(long_s)
        p = theirs(c, long_s)
    c["steady_us"], p["steady_us"] = marginal_us(cs, c), marginal_us(ps, p)
    return c, p


def ratio(a, b):
    return None if a is None or b is None or not b else a / b


def diff(a, b):
    return None if a is None or b is None else a - b


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def median_ci(xs, level=0.95):
    """A distribution-free interval of the median of the per-pair figures xs (order statistics, as the sign
    test makes them): (lo, hi, confidence), the k-th lowest and k-th highest value for the largest k whose
    confidence is still >= level. Fewer than 6 pairs cannot reach 95 % even with their whole range (2 pairs:
    50 %, 3: 75 %, 5: 94 %), and the confidence says so; more pairs narrow the interval."""
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    if not n:
        return (None, None, None)
    below = lambda k: sum(math.comb(n, i) for i in range(k)) / 2 ** n  # P(Binomial(n, 1/2) < k)
    k = 1
    while k + 1 <= n // 2 and 1 - 2 * below(k + 1) >= level:
        k += 1
    return (xs[k - 1], xs[n - k], 1 - 2 * below(k))


def n_pairs(n):
    return f"{n} pair{'' if n == 1 else 's'}"


def ci_text(ci, p=2, sign="", unit=""):
    lo, hi, conf = ci
    return f"median within {lo:{sign}.{p}f} to {hi:{sign}.{p}f}{unit} at {conf:.0%}"


NO_VERIFY, FULL_VERIFY = "cephbench --no-verify", "cephbench --verify=full"
OWN = ("bare aio", NO_TEL, "cephbench baseline", NO_VERIFY, FULL_VERIFY)  # rows that are not peers


def judge(lo, hi, ok):
    """A target judged on the interval of the pairs' median (median_ci), not the median alone: "met" when
    the whole interval meets it (`ok(lo)` and `ok(hi)`), "NOT met" when none of it does, "not resolved" when
    it straddles the target, which is what a 2-5 % target looks like on a machine whose pairs spread by
    +-10 %: more pairs narrow the interval. For a one-sided target the worse end decides met and the better
    end NOT met."""
    good = [ok(x) for x in (lo, hi) if x is not None]
    if not good:
        return "n/a"
    return "met" if all(good) else "NOT met" if not any(good) else "not resolved"


def verdicts(rows, mem):
    """The issue's targets, each with the measured value and its verdict (see judge)."""
    out = []

    def add(target, verdict, value, conf=None):
        met = {"met": True, "NOT met": False}.get(verdict)
        if met is not None and conf is not None and conf < 0.5:
            # One pair: its figure is no interval at all (0 % sure), so it cannot decide.
            verdict, met = "not resolved (one pair cannot say; 6 pairs or more for 95%)", None
        elif met is not None and conf is not None and conf < 0.9:
            # Fewer than 5 pairs: say how sure (the JSON keeps met/NOT met; `confidence` beside it).
            verdict += f" ({conf:.0%} sure; 6 pairs or more for 95%)"
        out.append(dict(target=target, verdict=verdict, met=met, confidence=conf, value=value))

    def every(rs, ci, ok):
        """One verdict over rows: NOT met if a row's whole interval misses, met if every row's meets."""
        vs = [judge(*r[ci][:2], ok) for r in rs]
        return "NOT met" if "NOT met" in vs else "met" if all(v == "met" for v in vs) else "not resolved"

    pairs = lambda r: n_pairs(r["pairs"])
    peers = [r for r in rows if r["peer"] not in OWN and r["iops_ratio"] is not None]
    if peers:
        # Against the best peer of each workload: the row with the lowest ratio.
        worst = min(peers, key=lambda r: r["iops_ratio"])
        add("IOPS >= 0.98x the best peer on every workload", every(peers, "iops_ci", lambda x: x >= 0.98),
            f"lowest median {f(worst['iops_ratio'])} ({worst['workload']} vs {worst['peer']}; "
            f"{ci_text(worst['iops_ci'])}, {pairs(worst)})", min(r["iops_ci"][2] for r in peers))
    floor = [r for r in rows if r["peer"] == "bare aio" and r["steady_ratio"] is not None]
    if floor:
        # The floor: a bare aio loop on the same library; librados's and librbd's own threads do most of
        # the client's work, so no tool built on them goes below it.
        worst = max(floor, key=lambda r: r["steady_ratio"])
        add("steady-state CPU per op <= 1.05x the bare aio loop on every workload",
            every(floor, "steady_ci", lambda x: x <= 1.05),
            f"highest median {worst['steady_ratio']:.2f}x ({worst['workload']}: {f(worst['steady_us_cb'], 1)} vs "
            f"{f(worst['steady_us_peer'], 1)} us/op; {ci_text(worst['steady_ci'])}, {pairs(worst)})",
            min(r["steady_ci"][2] for r in floor))
    for r in rows:
        if r["workload"].endswith(" QD1") and r["peer"] == "bare aio" and r["mean_us_cb"] is not None:
            d, (lo, hi, _) = r["mean_diff_us"], r["mean_diff_ci"]
            # Two-sided: NOT met only when the whole interval is more than 5 us off on one side.
            v = judge(lo, hi, lambda x: abs(x) <= 5)
            if v == "NOT met" and lo < -5 < 5 < hi:
                v = "not resolved"
            add("QD1 mean latency within 5 us of the bare aio loop", v,
                f"{d:+.1f} us, median of per-pair differences ({r['workload']}; "
                f"{ci_text(r['mean_diff_ci'], 1, '+', ' us')}, {pairs(r)})", r["mean_diff_ci"][2])
        if r["peer"] == NO_TEL and r["iops_ratio"]:
            cost = (1 - r["iops_ratio"]) * 100
            add("telemetry costs <= 2% IOPS", judge(*r["iops_ci"][:2], lambda x: x >= 0.98),
                f"{cost:+.1f}% (IOPS on/off {r['iops_ratio']:.3f}, {ci_text(r['iops_ci'], 3)}, {pairs(r)}, "
                f"{r['workload']})", r["iops_ci"][2])
        if r["peer"] in (NO_VERIFY, FULL_VERIFY) and r["cpu_per_kop_peer"]:
            # Not a target: what checking reads costs, stated (docs/usage.md, "Reads are checked").
            x = r["cpu_per_kop_cb"] / r["cpu_per_kop_peer"]
            add(f"read check: CPU per op, stamp (default) / {r['peer'].split()[1]}", "measured",
                f"{x:.3f} (IOPS ratio {f(r['iops_ratio'], 3)}, {r['workload']})")
    if mem:
        add("RSS flat in run length (long/short <= 1.10)", "met" if mem["ratio"] <= 1.10 else "NOT met",
            f"{mem['ratio']:.3f} ({mem['long_secs']} s vs {mem['short_secs']} s)")
    return out


def summarize(name, peer, pairs):
    """One table row from the (cephbench, peer) runs of a workload's pairs: medians of the per-pair ratios
    and, for the targets, the interval of each median (median_ci)."""
    per_k = lambda r: r["cpu_s"] / r["ops"] * 1000 if r["ops"] else None
    iops = [ratio(c["iops"], p["iops"]) for c, p in pairs]
    steady = [ratio(c["steady_us"], p["steady_us"]) for c, p in pairs]
    mean_diff = [diff(c["mean_us"], p["mean_us"]) for c, p in pairs]
    return dict(
        workload=name, peer=peer, pairs=len(pairs),
        iops_cb=med(c["iops"] for c, _ in pairs), iops_peer=med(p["iops"] for _, p in pairs),
        iops_ratio=med(iops), iops_ci=median_ci(iops),
        mean_ratio=med(ratio(c["mean_us"], p["mean_us"]) for c, p in pairs),
        mean_us_cb=med(c["mean_us"] for c, _ in pairs), mean_us_peer=med(p["mean_us"] for _, p in pairs),
        mean_diff_us=med(mean_diff), mean_diff_ci=median_ci(mean_diff),
        p99_ratio=med(ratio(c["p99_us"], p["p99_us"]) for c, p in pairs),
        cpu_per_kop_cb=med(per_k(c) for c, _ in pairs), cpu_per_kop_peer=med(per_k(p) for _, p in pairs),
        steady_us_cb=med(c["steady_us"] for c, _ in pairs),
        steady_us_peer=med(p["steady_us"] for _, p in pairs),
        steady_ratio=med(steady), steady_ci=median_ci(steady),
        rss_mib_cb=max(c["rss_kib"] for c, _ in pairs) / 1024,
        rss_mib_peer=max(p["rss_kib"] for _, p in pairs) / 1024)


def report(rows, mem, meta):
    """Prints the table, the QD1 latency line, the memory check and the targets; returns the targets."""
    hdr = ("| workload | peer | IOPS cb / peer | IOPS ratio | mean lat ratio | p99 ratio "
           "| steady CPU us/op cb / peer (ratio) | whole-process CPU s/1k ops cb / peer | peak RSS MiB cb / peer |")
    lines = [hdr, "|" + "---|" * 9]
    for r in rows:
        lines.append(f"| {r['workload']} | {r['peer']} | {f(r['iops_cb'], 0)} / {f(r['iops_peer'], 0)} "
                     f"| {f(r['iops_ratio'])} | {f(r['mean_ratio'])} | {f(r['p99_ratio'])} "
                     f"| {f(r['steady_us_cb'], 1)} / {f(r['steady_us_peer'], 1)} ({f(r['steady_ratio'])}) "
                     f"| {f(r['cpu_per_kop_cb'], 3)} / {f(r['cpu_per_kop_peer'], 3)} "
                     f"| {f(r['rss_mib_cb'], 0)} / {f(r['rss_mib_peer'], 0)} |")
    store, secs, short = meta["store"], meta["secs"], meta["short_secs"]
    if rows:
        s4m = "" if store != "memstore" else f" (RADOS 4M: {min(secs, 4)} s, to fit memstore)"
        print(f"cephbench vs peers, objectstore {store}, {n_pairs(meta['pairs'])} x {secs} s{s4m}, medians of "
              f"per-pair ratios (ratio = cephbench / peer); steady CPU = (CPU of the {secs} s run - CPU of a "
              f"{short} s run) / (ops of the one - ops of the other)\n")
        print("\n".join(lines))
    else:
        print(f"cephbench, objectstore {store}")
    for r in rows:
        if r["workload"].endswith(" QD1") and r["peer"] == "bare aio":
            print(f"\n{r['workload']}: mean latency cephbench {f(r['mean_us_cb'], 1)} us, bare aio "
                  f"{f(r['mean_us_peer'], 1)} us (per-pair difference: median {f(r['mean_diff_us'], 1)} us, "
                  f"{ci_text(r['mean_diff_ci'], 1, '+', ' us')})")
    if mem:
        print(f"\nRSS of cephbench rados write 4K QD16: {mem['short_secs']} s run {mem['rss_mib_short']:.1f} MiB, "
              f"{mem['long_secs']} s run {mem['rss_mib_long']:.1f} MiB (ratio {mem['ratio']:.3f})")
    targets = verdicts(rows, mem)
    if targets:
        print("\nTargets (issue #19" + ("; a --quick run is too short to judge them" if meta["quick"] else "")
              + "; met / NOT met: the whole interval of the median meets / misses it; not resolved: it straddles):")
        for t in targets:
            print(f"- {t['target']}: {t['value']} -> {t['verdict']}")
    return targets


def rejudge(path):
    """Re-renders a stored run (its JSON's raw pairs) with this script's rules; writes nothing."""
    doc = json.load(open(path))
    rows = [summarize(x["workload"], x["peer"], [(p["cephbench"], p["peer"]) for p in x["pairs"]])
            for x in doc["raw"]]
    report(rows, doc.get("memory"), dict(store=doc["store"], pairs=doc["pairs"], secs=doc["secs"],
                                         short_secs=doc["short_secs"], quick=doc["quick"]))
    print(f"\n(re-judged from {path}; that run took {doc['elapsed_s']:.0f} s)")


def f(x, p=2):
    return "n/a" if x is None else f"{x:.{p}f}"


def main():
    t0 = time.time()
    rows, raw = [], []
    try:
        setup()
        for name, ours, peers, long_s in workloads():
            # One discarded run first: whichever tool goes first on a new workload otherwise pays the
            # cluster's warm-up (memstore growing, new PGs' first writes), and cephbench always goes first.
            hint = None if QUICK else ours(long_s)
            short_s = min(SHORT, long_s - 1)
            for peer, theirs in peers.items():
                # A peer may bring its own cephbench run (the same workload in the peer's layout).
                ours_p, theirs = theirs if isinstance(theirs, tuple) else (ours, theirs)
                pairs = []
                for i in range(PAIRS):
                    # Odd pairs let the peer go first (with an even PAIRS each tool leads half the pairs).
                    c, p = run_pair(ours_p, theirs, long_s, short_s, peer_first=i % 2 == 1 and hint is not None,
                                    hint=hint)
                    hint = c
                    log(f"bench: {name} pair {i + 1}: cephbench {c['iops']:.0f} IOPS "
                        f"{f(c['steady_us'], 1)} us CPU/op, {peer} {p['iops']:.0f} IOPS {f(p['steady_us'], 1)} us")
                    pairs.append((c, p))
                raw.append(dict(workload=name, peer=peer, pairs=[dict(cephbench=c, peer=p) for c, p in pairs]))
                rows.append(summarize(name, peer, pairs))
        mem = None
        if LONG > 0:
            # --no-cleanup: removing a long run's objects takes minutes; the pool goes at the end.
            short = cephbench_rados("write", K4, 16, "cbmem_s", secs=10, extra=["--no-cleanup"])
            long_ = cephbench_rados("write", K4, 16, "cbmem_l", secs=LONG, extra=["--no-cleanup"])
            mem = dict(short_secs=10, long_secs=LONG, rss_mib_short=short["rss_kib"] / 1024,
                       rss_mib_long=long_["rss_kib"] / 1024, ratio=long_["rss_kib"] / short["rss_kib"])
    finally:
        teardown()

    meta = dict(store=STORE, pairs=PAIRS, secs=SECS, short_secs=SHORT, quick=QUICK)
    targets = report(rows, mem, meta)
    elapsed = time.time() - t0
    print(f"\n(bench took {elapsed:.0f} s)")
    doc = dict(meta, rows=rows, memory=mem, targets=targets, raw=raw, elapsed_s=elapsed)
    os.makedirs(os.path.dirname(os.path.abspath(OUT)), exist_ok=True)
    with open(OUT, "w") as g:
        json.dump(doc, g, indent=1)
    log(f"bench: JSON written to {OUT}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rejudge"]:
        rejudge(sys.argv[2])
    else:
        main()
