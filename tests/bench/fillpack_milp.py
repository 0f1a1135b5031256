#!/usr/bin/env python3
"""fillpack_milp - how far the fill-and-packing argument of the tight bound could go.

The tight bound (src/lowerbound.c, pieces (1), (3) and (5)) says, for every plan:
a device whose lowest layer is e cannot start before Pf(e), the forward chain below e,
and then runs M times the work of every layer it holds:

    (A)  T >= Pf(e_d) + M * sum_{l on d} (f_l + b_l + w_l)
    (B)  T >= Pf(e_d) + Pb(e_d) + w_0 + M * sum_{l on d} (f_l + b_l)   (W may wait)

lowerbound.c proves the least T over assignments of a relaxation: layers merged into
cost classes and bins given the fills of the D earliest entries, any layer in any bin.
The exact version keeps the rule the relaxation drops: a device holds no layer below its
entry. This script writes that exact problem as a mixed-integer program (CPLEX LP format)
for a profile of samples/profiles, W = B = half the measured backward, as
tests/bench/bench_tune.c's profile table models them:

    x[l,d] = 1: layer l on device d;  z[d,e] = 1: device d's entry is layer e
    each layer on one device; each device at most one entry, a layer it holds
    (z[d,e] <= x[e,d]); x[l,d] <= sum_{e<=l} z[d,e]: so the entry is its lowest layer
    minimise T subject to (A) and (B) for every device.

Any solution a solver finds is an assignment meeting (A) and (B) at its T, so its T is an
upper limit of what this argument can ever prove: a bound of this family never exceeds
it. The solver's "best possible" is a lower bound on the exact optimum (weak here: the
LP relaxation spreads layers fractionally). With MAX_STAGES K, a device holds at most K
runs of consecutive layers (stages), as the tuner's --max-stages-per-device: the best the
argument allows inside the tuner's own space. Not part of the build; run by hand:

    python3 tests/bench/fillpack_milp.py samples/profiles/gpt-oss-20b.json 8 16 > m.lp
    cbc m.lp sec 25 solve          # Debian: coinor-cbc (or glpsol --lp m.lp)
"""
import json
import sys


def read_profile(path):
    with open(path) as fh:
        doc = json.load(fh)
    return [(y["f_ms"], y["b_full_ms"] / 2, y["b_full_ms"] / 2) for y in doc["layers"]]


def prefix(values):
    out = [0.0]
    for v in values:
        out.append(out[-1] + v)
    return out


def terms(pairs):
    return " ".join("%+.6f %s" % (-coef, var) for coef, var in pairs)


def write_lp(layers, devices, micro, out, max_runs=0):
    n = len(layers)
    pf = prefix(f for f, _, _ in layers)
    pb = prefix(b for _, b, _ in layers)
    w0 = layers[0][2]
    rows = []
    for l in range(n):
        rows.append(" + ".join("x_%d_%d" % (l, d) for d in range(devices)) + " = 1")
    for d in range(devices):
        rows.append(" + ".join("z_%d_%d" % (d, e) for e in range(n)) + " <= 1")
        for l in range(n):
            rows.append("x_%d_%d " % (l, d) + " ".join("- z_%d_%d" % (d, e) for e in range(l + 1)) + " <= 0")
            # the entry is a layer the device holds, so no lower entry can be claimed
            rows.append("z_%d_%d - x_%d_%d <= 0" % (d, l, l, d))
        a = [(pf[e], "z_%d_%d" % (d, e)) for e in range(n)]
        a += [(micro * sum(layers[l]), "x_%d_%d" % (l, d)) for l in range(n)]
        rows.append("T " + terms(a) + " >= 0")
        b = [(pf[e] + pb[e] + w0, "z_%d_%d" % (d, e)) for e in range(n)]
        b += [(micro * (layers[l][0] + layers[l][1]), "x_%d_%d" % (l, d)) for l in range(n)]
        rows.append("T " + terms(b) + " >= 0")
        if max_runs > 0:
            # r[l,d] = 1 where a run of device d's layers (a stage) starts at layer l
            for l in range(n):
                prev = " + x_%d_%d" % (l - 1, d) if l > 0 else ""
                rows.append("r_%d_%d - x_%d_%d%s >= 0" % (l, d, l, d, prev))
            rows.append(" + ".join("r_%d_%d" % (l, d) for l in range(n)) + " <= %d" % max_runs)
    out.write("Minimize\n obj: T\nSubject To\n")
    for i, r in enumerate(rows):
        out.write(" c%d: %s\n" % (i, r))
    out.write("Binaries\n")
    for l in range(n):
        for d in range(devices):
            out.write(" x_%d_%d\n" % (l, d))
    for d in range(devices):
        for e in range(n):
            out.write(" z_%d_%d\n" % (d, e))
            if max_runs > 0:
                out.write(" r_%d_%d\n" % (e, d))
    out.write("End\n")


def main(argv):
    if len(argv) not in (4, 5):
        sys.stderr.write("usage: fillpack_milp.py PROFILE.json DEVICES MICROBATCHES [MAX_STAGES] > out.lp\n")
        return 2
    try:
        layers = read_profile(argv[1])
        devices, micro = int(argv[2]), int(argv[3])
        max_runs = int(argv[4]) if len(argv) == 5 else 0
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sys.stderr.write("fillpack_milp.py: %s: %s\n" % (argv[1], exc))
        return 2
    if devices < 1 or micro < 1 or not layers:
        sys.stderr.write("fillpack_milp.py: devices, microbatches and layers must be positive\n")
        return 2
    write_lp(layers, devices, micro, sys.stdout, max_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
