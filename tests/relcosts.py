#!/usr/bin/env python3
"""The ratios of samples/profiles/relative-costs.json against the cost model.

For every row (family, hidden, seq_len, vocab) it writes the family's config
(samples/profiles/configs/relative-FAMILY.json) with the row's vocab, runs
`octopipe cost --seq SEQ` on the given cluster, and compares the five ratios the
measurements give: head/layer (head F over the reference F), MoE/dense (deepseek: MoE F
over dense F), attention/Mamba (nemotronh: attention F over Mamba F), B/F and W/F of each
measured layer type. Prints a Markdown table per family (mean measured, mean predicted,
mean and worst relative error of the ratio) and, with --check TOL, exits 1 when a ratio's
mean error passes TOL (a fraction)."""
import json, os, subprocess, sys, tempfile

def main():
    args = sys.argv[1:]
    octo, top, cluster = args[0], args[1], args[2]
    tol = float(args[args.index('--check') + 1]) if '--check' in args else None
    rows = json.load(open(os.path.join(top, 'samples/profiles/relative-costs.json')))['rows']
    tmp = tempfile.mkdtemp()
    stats = {}
    for r in rows:
        fam = r['family']
        cfg = json.load(open(os.path.join(top, 'samples/profiles/configs/relative-%s.json' % fam)))
        cfg['vocab_size'] = r['vocab']
        assert cfg['hidden_size'] == r['hidden']
        cp, mp = os.path.join(tmp, 'c.json'), os.path.join(tmp, 'm.json')
        json.dump(cfg, open(cp, 'w'))
        subprocess.run([octo, 'cost', cp, '--cluster', cluster, '--runtime', 'hf-eager', '--seq', str(r['seq_len']), '-o', mp],
                       check=True, stdout=subprocess.DEVNULL)
        layers = json.load(open(mp))['layers']
        def mean(pred):
            ls = [l for l in layers if pred(l['kind'])]
            return [sum(l[k] for l in ls) / len(ls) for k in ('f_ms', 'b_ms', 'w_ms')]
        head = mean(lambda k: k == 'head')
        if fam == 'gemma':
            layer, second = mean(lambda k: k.endswith('+mlp')), None
        elif fam == 'deepseek':
            layer, second = mean(lambda k: k.endswith('+dense')), mean(lambda k: k.endswith('+moe'))
        else:
            layer, second = mean(lambda k: k == 'attn'), mean(lambda k: k == 'mamba2')
        m = r['ratios']
        want, got = {}, {}
        ref = second[0] if fam == 'nemotronh' else layer[0]
        hk = 'head/Mamba F' if fam == 'nemotronh' else 'head/layer F'
        want[hk] = m[6] / (m[3] if fam == 'nemotronh' else m[0]); got[hk] = head[0] / ref
        if fam == 'deepseek':
            want['MoE/dense F'] = m[3] / m[0]; got['MoE/dense F'] = second[0] / layer[0]
        if fam == 'nemotronh':
            want['attention/Mamba F'] = m[0] / m[3]; got['attention/Mamba F'] = layer[0] / second[0]
        lname = {'gemma': 'layer', 'deepseek': 'dense', 'nemotronh': 'attention'}[fam]
        want[lname + ' B/F'] = m[1] / m[0]; got[lname + ' B/F'] = layer[1] / layer[0]
        want[lname + ' W/F'] = m[2] / m[0]; got[lname + ' W/F'] = layer[2] / layer[0]
        want[lname + ' (B+W)/F'] = (m[1] + m[2]) / m[0]; got[lname + ' (B+W)/F'] = (layer[1] + layer[2]) / layer[0]
        if second:
            sname = 'MoE' if fam == 'deepseek' else 'Mamba'
            want[sname + ' B/F'] = m[4] / m[3]; got[sname + ' B/F'] = second[1] / second[0]
            want[sname + ' W/F'] = m[5] / m[3]; got[sname + ' W/F'] = second[2] / second[0]
            want[sname + ' (B+W)/F'] = (m[4] + m[5]) / m[3]; got[sname + ' (B+W)/F'] = (second[1] + second[2]) / second[0]
        want['head B/F'] = m[7] / m[6]; got['head B/F'] = head[1] / head[0]
        want['head W/F'] = m[8] / m[6]; got['head W/F'] = head[2] / head[0]
        want['head (B+W)/F'] = (m[7] + m[8]) / m[6]; got['head (B+W)/F'] = (head[1] + head[2]) / head[0]
        for k in want:
            e = abs(got[k] - want[k]) / want[k] if want[k] > 0 else (0 if got[k] < 0.005 else float('inf'))
            stats.setdefault((fam, k), []).append((want[k], got[k], e))
    bad = 0
    print('| family | ratio | rows | measured (mean) | cost model (mean) | mean error | worst error |')
    print('|---|---|---|---|---|---|---|')
    for (fam, k), v in stats.items():
        n = len(v)
        me = sum(e for _, _, e in v) / n
        worst = max(e for _, _, e in v)
        fmt = lambda e: 'inf' if e == float('inf') else '%.0f%%' % (100 * e)
        print('| %s | %s | %d | %.3g | %.3g | %s | %s |' % (fam, k, n, sum(w for w, _, _ in v) / n,
              sum(g for _, g, _ in v) / n, fmt(me), fmt(worst)))
        if tol is not None and me > tol:
            bad += 1
    return 1 if bad else 0

sys.exit(main())
