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

        def theirs(c, secs):
            calls.append(("peer", secs))
            self.assertEqual(c["ops"], 1000 * secs, "the peer sees cephbench's run of the same length")
            return r(1200 * secs, 0.3 + 0.0004 * 1200 * secs)

        c, p = run.run_pair(ours, theirs, 10, 2)
        self.assertEqual(calls, [("cephbench", 2), ("peer", 2), ("cephbench", 10), ("peer", 10)])
        self.assertEqual((c["ops"], p["ops"]), (10000, 12000), "the figures are the long runs'")
        self.assertAlmostEqual(c["steady_us"], 500.0)
        self.assertAlmostEqual(p["steady_us"], 400.0)
        calls.clear()
        c, p = run.run_pair(ours, theirs, 1, 0)
        self.assertEqual(calls, [("cephbench", 1), ("peer", 1)])
        self.assertIsNone(c["steady_us"])

    def test_the_bare_loop_target_is_judged_on_the_steady_ratio(self):
        rows = [dict(workload="RADOS 4K write QD16", peer="bare aio", iops_ratio=1.0, steady_ratio=1.08,
                     steady_range=(1.02, 1.12), steady_us_cb=80.0, steady_us_peer=74.0, mean_us_cb=None,
                     cpu_per_kop_cb=1.0, cpu_per_kop_peer=1.0),
                dict(workload="RADOS 4K write QD16", peer="rados bench", iops_ratio=0.99, steady_ratio=1.01,
                     steady_range=(1.0, 1.02), steady_us_cb=80.0, steady_us_peer=79.0, mean_us_cb=None,
                     cpu_per_kop_cb=1.0, cpu_per_kop_peer=1.0)]
        t = {v["target"]: v for v in run.verdicts(rows, None)}
        cpu = t["steady-state CPU per op <= 1.05x the bare aio loop on every workload"]
        self.assertFalse(cpu["met"])
        self.assertIn("1.08x", cpu["value"])
        self.assertTrue(t["IOPS >= 0.98x the best peer on every workload"]["met"])


if __name__ == "__main__":
    unittest.main()
