#!/usr/bin/python3
"""The peers section and chart on synthetic run folders: from peers.json (medians, intervals,
paired ratios, a level beyond a model's ceiling), from fiberio's first round when a quick run
left peers out, and "not run" without either."""
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import charts  # noqa: E402
import compare  # noqa: E402
import data as D  # noqa: E402
import synth  # noqa: E402
from sections import peers as section  # noqa: E402
import history  # noqa: E402


class Section(synth.SyntheticRuns):
    def text(self, **docs):
        return "\n".join(section.peers_section(D.Run(self.new_folder(**docs))))

    def test_from_peers(self):
        t = self.text(peers=synth.peers(levels=(100, 2000)))
        self.assertIn("## Beside the runtimes people already use", t)
        self.assertIn("`peers.json`, medians of 5 interleaved rounds", t)
        # 4.0 us against asio-coro's 6.5: 0.615, its interval beside it.
        self.assertIn("| 100 | asio-coro | coroutine | 6.50 [6.17, 6.83] |", t)
        self.assertIn("| 0.615 [0.603, 0.628] |", t)
        self.assertIn("| 2000 | pth | coroutine | not run: pth serves at most 1008 connections",
                      t)
        rows = [ln for ln in t.splitlines() if ln.startswith("| 100 |")]
        self.assertEqual([r.split("|")[2].strip() for r in rows], [n for n, _, _ in synth.PEERS])

    def test_from_fiberio_when_peers_did_not_run(self):
        skipped = {"experiment": "peers", "meta": synth.META, "status": "not run",
                   "reason": "quick preset"}
        fio = synth.fiberio()
        rows = fio["summary"]
        rows.append(dict(next(r for r in rows if r["variant"] == "epoll"), variant="libuv"))
        t = self.text(peers=skipped, fiberio=fio)
        self.assertIn("`fiberio.json`, fiberio's first round", t)
        self.assertIn("| 100 | fiber | ours |", t)
        self.assertIn("| 100 | libuv | callback |", t)
        # fiberio without any peer (its quick preset): nothing to show.
        t = self.text(peers=skipped, fiberio=synth.fiberio())
        self.assertIn("not run: peers not run: quick preset; fiberio measured no peer either", t)

    def test_not_run_without_either(self):
        t = self.text(peers=None, fiberio=None)
        self.assertIn("not run: peers.json not in the run folder", t)


class Chart(synth.SyntheticRuns):
    def test_drawn_with_data_and_not_run_without(self):
        ok = self.new_folder(peers=synth.peers())
        self.assertEqual(charts.draw_all(ok, only=["peers"]), {"peers": "ok"})
        self.assertTrue((ok / "peers.png").exists())
        empty = self.new_folder(peers=None, fiberio=None)
        self.assertEqual(charts.draw_all(empty, only=["peers"]), {"peers": "not run"})


class CompareAndHistory(synth.SyntheticRuns):
    def test_compare_sets_the_peers_side_by_side(self):
        a = D.Run(self.new_folder(peers=synth.peers()))
        b = D.Run(self.new_folder(peers=synth.peers()))
        text = "\n".join(compare.build(a, b)[0])
        self.assertIn("## Peers", text)
        self.assertIn("| peers 100 conns: CPU, fiber/pth | 0.286 x", text)
        self.assertNotIn("## Peers", "\n".join(compare.build(
            D.Run(self.new_folder(peers=None)), D.Run(self.new_folder(peers=None)))[0]))

    def test_history_reads_each_round_of_the_ratios(self):
        figs = history.from_peers(synth.peers())
        f = figs["peers/1000/cpu fiber/asio-coro"]
        self.assertAlmostEqual(f.value, 4.0 / 6.5)
        self.assertEqual(f.n, 5)
        self.assertEqual(len([n for n in figs if n.startswith("peers/100/")]), 12)


if __name__ == "__main__":
    unittest.main()
