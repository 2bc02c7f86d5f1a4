#!/usr/bin/env python3
"""Score a MOTChallenge result file against TUD-Campus ground truth with py-motmetrics.

Setup (once):  python3 -m venv .venv-mot && .venv-mot/bin/pip install motmetrics==1.4.0 'numpy<2'
Usage:         .venv-mot/bin/python scripts/mot_score.py RESULT.txt [--gt PATH]

The ground truth is read from ../shared/data/mot/ relative to the repository root and never copied
into the tree (MOTChallenge data is CC BY-NC-SA). Matching: IoU >= 0.5, as the peers were scored.
"""
import argparse
import os
import sys

import motmetrics as mm

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_GT = os.path.join(REPO_ROOT, "..", "shared", "data", "mot", "TUD-Campus", "gt.txt")

# Published figures on exactly these detections (../shared/data/mot/README.md).
PEERS = [
    ("SORT (reference implementation)", 62.7, 60.6, 6, 15, 113),
    ("BoT-SORT (trackers 2.6.1, no CMC)", 63.2, 74.5, 4, 26, 102),
    ("ByteTrack (trackers 2.6.1)", 57.9, 60.3, 5, 34, 112),
    ("OC-SORT (trackers 2.6.1)", 57.1, 68.0, 3, 24, 127),
    ("norfair 2.3.0", 50.1, 67.7, 3, 94, 82),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", help="MOT result file: frame,id,left,top,width,height,1,-1,-1,-1")
    parser.add_argument("--gt", default=DEFAULT_GT, help="ground truth file (default: %(default)s)")
    parser.add_argument("--name", default="dockd (DockTracking)", help="row label for the result")
    args = parser.parse_args()

    gt = mm.io.loadtxt(args.gt, fmt="mot15-2D", min_confidence=1)
    result = mm.io.loadtxt(args.result, fmt="mot15-2D")
    accumulator = mm.utils.compare_to_groundtruth(gt, result, "iou", distth=0.5)
    host = mm.metrics.create()
    summary = host.compute(accumulator, metrics=["mota", "idf1", "num_switches", "num_false_positives", "num_misses"],
                           name="ours")
    row = summary.loc["ours"]
    ours = (args.name, 100 * row["mota"], 100 * row["idf1"], int(row["num_switches"]),
            int(row["num_false_positives"]), int(row["num_misses"]))

    print(f"| {'tracker':<36} | {'MOTA':>5} | {'IDF1':>5} | {'IDsw':>4} | {'FP':>4} | {'FN':>4} |")
    print(f"|{'-' * 38}|{'-' * 7}|{'-' * 7}|{'-' * 6}|{'-' * 6}|{'-' * 6}|")
    for name, mota, idf1, switches, fp, fn in [ours] + PEERS:
        print(f"| {name:<36} | {mota:5.1f} | {idf1:5.1f} | {switches:4d} | {fp:4d} | {fn:4d} |")
    best_mota = max(p[1] for p in PEERS)
    best_idf1 = max(p[2] for p in PEERS)
    verdict = "above" if ours[1] > best_mota and ours[2] > best_idf1 else "NOT above"
    print(f"\nours: MOTA {ours[1]:.1f} vs best peer {best_mota:.1f}; IDF1 {ours[2]:.1f} vs best peer {best_idf1:.1f} "
          f"-> {verdict} every peer on both")
    return 0


if __name__ == "__main__":
    sys.exit(main())
