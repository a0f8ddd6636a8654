#!/usr/bin/env python3
"""Run one engine on one benchmark model in a loop, for a profiler.

    perf record -o /tmp/ox.data -- python3 bench/profile_engine.py resnet50 --batch 1 --seconds 10
    perf report -i /tmp/ox.data --sort dso,symbol

--engine ort runs onnxruntime instead (for its own profile, see also
onnxruntime's SessionOptions.enable_profiling).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--engine", choices=["ox", "ort"], default="ox")
    args = ap.parse_args()
    R.pin(args.threads)
    with open(R.model_path(args.model), "rb") as f:
        model_bytes = f.read()
    feeds = R.make_inputs(R.ort_session(model_bytes, 1), args.model, args.batch)
    if args.engine == "ox":
        s = R.ox_session(model_bytes, args.threads)
        run = lambda: s.run_repeat(feeds, 1)  # noqa: E731
    else:
        s = R.ort_session(model_bytes, args.threads)
        run = lambda: s.run(None, feeds)  # noqa: E731
    run()
    n, t0 = 0, time.time()
    while time.time() - t0 < args.seconds:
        run()
        n += 1
    print("%d runs, %.3f ms each" % (n, (time.time() - t0) / n * 1e3))


if __name__ == "__main__":
    main()
