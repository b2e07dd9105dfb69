#!/usr/bin/env python3
"""Unit tests of perf/run.py's arithmetic (no cluster): `python3 -m unittest discover -s bench`."""
import os
import sys
import unittest

for k in ("CEPH_CONF", "CB", "BARE"):
    os.environ.setdefault(k, "/nonexistent")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def r(ops, cpu_s):
    return dict(ops=ops, cpu_s=cpu_s, iops=ops / 10)


class SteadyStateCpu(unittest.TestCase):
    def test_marginal_is_the_difference_of_two_runs(self):
        # 0.1 s of fixed cost (connect, probes) and 500 us per op: the whole-process figure of either run
        # includes the fixed cost, the marginal one does not.
        short, long_ = r(1000, 0.6), r(5000, 2.6)
        self.assertAlmostEqual(run.marginal_us(short, long_), 500.0)
        self.assertAlmostEqual(long_["cpu_s"] / long_["ops"] * 1e6, 520.0)
        self.assertAlmostEqual(short["cpu_s"] / short["ops"] * 1e6, 600.0)

    def test_no_figure_from_one_run_or_without_more_ops(self):
        self.assertIsNone(run.marginal_us(None, r(5000, 2.6)))
        self.assertIsNone(run.marginal_us(r(5000, 2.6), r(5000, 2.7)))
        self.assertIsNone(run.marginal_us(r(6000, 2.6), r(5000, 2.7)))

    def test_a_pair_runs_each_tool_short_then_long_alternated(self):
        calls = []

        def ours(secs):
            calls.append(("cephbench", secs))
            return r(1000 * secs, 0.1 + 0.0005 * 1000 * secs)

        seen = []

        def theirs(c, secs):
            calls.append(("peer", secs))
            seen.append(c["ops"])
            return r(1200 * secs, 0.3 + 0.0004 * 1200 * secs)

        c, p = run.run_pair(ours, theirs, 10, 2)
        self.assertEqual(calls, [("cephbench", 2), ("peer", 2), ("cephbench", 10), ("peer", 10)])
        self.assertEqual(seen, [2000, 10000], "the peer sees cephbench's run of the same length")
        self.assertEqual((c["ops"], p["ops"]), (10000, 12000), "the figures are the long runs'")
        self.assertAlmostEqual(c["steady_us"], 500.0)
        self.assertAlmostEqual(p["steady_us"], 400.0)
        calls.clear()
        c, p = run.run_pair(ours, theirs, 10, 2, peer_first=True, hint=r(7000, 0.0))
        self.assertEqual(calls, [("peer", 2), ("cephbench", 2), ("peer", 10), ("cephbench", 10)],
                         "B A B A: the peer goes first")
        self.assertEqual(seen[2:], [7000, 2000], "told cephbench's IOPS by the hint, then by its short run")
        self.assertAlmostEqual(c["steady_us"], 500.0)
        self.assertAlmostEqual(p["steady_us"], 400.0)
        calls.clear()
        c, p = run.run_pair(ours, theirs, 1, 0)
        self.assertEqual(calls, [("cephbench", 1), ("peer", 1)])
        self.assertIsNone(c["steady_us"])

    def test_the_bare_loop_target_is_judged_on_the_steady_ratio(self):
        rows = [row("bare aio", iops=(1.0, (0.99, 1.01)), steady=(1.08, (1.06, 1.12))),
                row("rados bench", iops=(0.99, (0.985, 1.0)), steady=(1.01, (1.0, 1.02)))]
        t = {v["target"]: v for v in run.verdicts(rows, None)}
        cpu = t[CPU]
        self.assertEqual((cpu["verdict"], cpu["met"]), ("NOT met", False), "every pair above 1.05x")
        self.assertIn("1.08x", cpu["value"])
        self.assertEqual(t[IOPS]["verdict"], "met")
        self.assertTrue(t[IOPS]["met"])


CPU = "steady-state CPU per op <= 1.05x the bare aio loop on every workload"
IOPS = "IOPS >= 0.98x the best peer on every workload"


def row(peer, iops, steady, workload="RADOS 4K write QD16", conf=0.96):
    """A table row with (median, (interval of the median)) of the IOPS and steady CPU ratios, as 6 pairs
    give them."""
    return dict(workload=workload, peer=peer, pairs=6, iops_ratio=iops[0], iops_ci=(*iops[1], conf),
                steady_ratio=steady[0], steady_ci=(*steady[1], conf), steady_us_cb=80.0,
                steady_us_peer=80.0 / steady[0], mean_us_cb=None, cpu_per_kop_cb=1.0, cpu_per_kop_peer=1.0)


class Verdicts(unittest.TestCase):
    def test_pairs_on_both_sides_of_a_target_do_not_resolve_it(self):
        # The median alone would say "met" (0.99) or "NOT met" (1.08): the pairs say the machine cannot tell.
        t = {v["target"]: v for v in run.verdicts([row("bare aio", (0.99, (0.85, 1.12)), (1.08, (0.9, 1.3)))], None)}
        self.assertEqual(t[CPU]["verdict"], "not resolved")
        self.assertIsNone(t[CPU]["met"])
        self.assertIn("median within 0.90 to 1.30 at 96%, 6 pairs", t[CPU]["value"])

    def test_a_verdict_from_few_pairs_says_how_sure_it_is(self):
        t = {v["target"]: v for v in run.verdicts([row("bare aio", (1.0, (0.99, 1.01)), (1.2, (1.1, 1.3)),
                                                       conf=0.75)], None)}
        self.assertEqual(t[CPU]["verdict"], "NOT met (75% sure; 6 pairs or more for 95%)")
        self.assertEqual((t[CPU]["met"], t[CPU]["confidence"]), (False, 0.75))

    def test_one_pair_decides_nothing(self):
        t = {v["target"]: v for v in run.verdicts([row("bare aio", (1.0, (1.0, 1.0)), (1.4, (1.4, 1.4)),
                                                       conf=0.0)], None)}
        self.assertEqual(t[CPU]["verdict"], "not resolved (one pair cannot say; 6 pairs or more for 95%)")
        self.assertIsNone(t[CPU]["met"])

    def test_one_row_missing_in_every_pair_fails_the_target_for_every_workload(self):
        rows = [row("rados bench", (1.0, (0.99, 1.02)), (1.0, (1.0, 1.0))),
                row("fio rados", (0.9, (0.88, 0.95)), (1.0, (1.0, 1.0)), workload="RADOS 4M write QD16"),
                row("rbd bench", (1.0, (0.9, 1.1)), (1.0, (1.0, 1.0)), workload="RBD 4K randread QD32")]
        t = {v["target"]: v for v in run.verdicts(rows, None)}
        self.assertEqual(t[IOPS]["verdict"], "NOT met")
        self.assertIn("RADOS 4M write QD16 vs fio rados", t[IOPS]["value"])
        rows[1] = row("fio rados", (0.99, (0.97, 1.01)), (1.0, (1.0, 1.0)), workload="RADOS 4M write QD16")
        self.assertEqual({v["target"]: v for v in run.verdicts(rows, None)}[IOPS]["verdict"], "not resolved")

    def test_qd1_latency_is_two_sided(self):
        qd1 = dict(row("bare aio", (1.0, (1.0, 1.0)), (1.0, (1.0, 1.0)), workload="RADOS 4K write QD1"),
                   mean_us_cb=2500.0)
        target = "QD1 mean latency within 5 us of the bare aio loop"
        for d, lo_hi, want in ((1.0, (-3.0, 4.0), "met"), (300.0, (270.0, 340.0), "NOT met"),
                               (-200.0, (-400.0, -20.0), "NOT met"), (10.0, (-300.0, 400.0), "not resolved"),
                               (3.0, (-2.0, 40.0), "not resolved")):
            qd1.update(mean_diff_us=d, mean_diff_ci=(*lo_hi, 0.96))
            t = {v["target"]: v for v in run.verdicts([qd1], None)}
            self.assertEqual(t[target]["verdict"], want, (d, lo_hi))


class MedianInterval(unittest.TestCase):
    def test_few_pairs_give_their_whole_range_at_a_low_confidence(self):
        self.assertEqual(run.median_ci([1.1, 0.9, 1.0]), (0.9, 1.1, 0.75))
        self.assertEqual(run.median_ci([1.0, 1.2]), (1.0, 1.2, 0.5))
        self.assertEqual(run.median_ci([1.0]), (1.0, 1.0, 0.0))
        self.assertEqual(run.median_ci([None]), (None, None, None))

    def test_more_pairs_drop_the_extremes_at_95_percent(self):
        xs = [0.80, 0.97, 0.98, 0.99, 1.00, 1.01, 1.02, 1.03, 1.30]  # one outlier each side
        lo, hi, conf = run.median_ci(xs)
        self.assertEqual((lo, hi), (0.97, 1.03))
        self.assertGreaterEqual(conf, 0.95)
        self.assertAlmostEqual(conf, 1 - 2 * 10 / 512)
        lo, hi, conf = run.median_ci(list(range(20)))
        self.assertEqual((lo, hi), (5, 14))  # the sign test's 95 % interval of 20 values
        self.assertGreaterEqual(conf, 0.95)

    def test_a_row_carries_the_interval_of_each_median(self):
        pairs = [(dict(iops=100 * x, mean_us=10.0, p99_us=None, cpu_s=1.0, ops=1000, rss_kib=1024, steady_us=50.0),
                  dict(iops=100.0, mean_us=10.0 - x, p99_us=None, cpu_s=1.0, ops=1000, rss_kib=1024, steady_us=50.0))
                 for x in (0.9, 1.0, 1.1)]
        r = run.summarize("RADOS 4K write QD1", "bare aio", pairs)
        self.assertEqual(r["pairs"], 3)
        self.assertAlmostEqual(r["iops_ratio"], 1.0)
        self.assertEqual(tuple(round(x, 6) for x in r["iops_ci"]), (0.9, 1.1, 0.75))
        self.assertEqual(r["steady_ci"], (1.0, 1.0, 0.75))
        self.assertEqual(tuple(round(x, 6) for x in r["mean_diff_ci"][:2]), (0.9, 1.1))


class ClientCpu(unittest.TestCase):
    def test_cpu_is_the_tools_own_through_timeout_with_microseconds(self):
        # ~0.3 s of CPU in a grandchild (timeout -> sh -> python3): wait4 on timeout counts it.
        out, cpu, rss = run.timed(["sh", "-c", "python3 -c 'import time\nt=time.process_time()\n"
                                   "while time.process_time()-t<0.3: pass\nprint(42)'"], secs=5)
        self.assertEqual(out.strip(), "42")
        self.assertGreater(cpu, 0.28)
        self.assertLess(cpu, 2.0)
        self.assertNotAlmostEqual(cpu * 100, round(cpu * 100), places=6, msg="not rounded to 10 ms")
        self.assertGreater(rss, 1000, "peak RSS in KiB")

    def test_a_failed_tool_stops_the_bench(self):
        with self.assertRaises(SystemExit) as e:
            run.timed(["sh", "-c", "echo boom >&2; exit 3"], secs=5)
        self.assertIn("failed (3): boom", str(e.exception))


if __name__ == "__main__":
    unittest.main()
