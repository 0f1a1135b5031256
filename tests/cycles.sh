#!/bin/sh
# No file-level circles between modules: for the engine's objects (src/, src/cli/, the
# octopipe program's) and the UI's, the symbols each object file defines and uses (nm) make
# a graph of file -> file it calls; a strongly connected set of files is a circle. Files of
# one module split along seams (sim.c, sim_setup.c, ... sharing sim_impl.h) may call each
# other: a circle is allowed only when every file in it has the same module name, the part
# of its name before the first '_'. Run from the build directory (make check does).
# TAP output; needs python3 and nm (binutils).
here=$(pwd)
command -v nm >/dev/null && command -v python3 >/dev/null || { echo "1..0 # SKIP nm or python3 missing"; exit 0; }
# the libraries' own members (stale objects of renamed files are not in them) and the
# program's command objects
[ -f "$here/libocto.a" ] && [ -f "$here/libui.a" ] ||
    { echo "1..0 # SKIP no libocto.a here (run from the build directory)"; exit 0; }
python3 - "$here/libocto.a" "$here/libui.a" $(ls "$here"/src/cli/octopipe-*.o "$here"/src/octopipe-main.o 2>/dev/null) <<'PY'
import os, re, subprocess, sys
defs, uses = {}, {}
for f in sys.argv[1:]:
    out = subprocess.run(['nm', '-A', f], capture_output=True, text=True).stdout
    for l in out.splitlines():
        # "lib.a:member.o:ADDR T name" from an archive, "file.o:ADDR T name" from an object
        parts = l.split(':', 2) if f.endswith('.a') else [f] + l.split(':', 1)
        if len(parts) < 3:
            continue
        o, p = parts[1] if f.endswith('.a') else f, parts[2].split()
        defs.setdefault(o, set()); uses.setdefault(o, set())
        if len(p) == 3 and p[1] in 'TDBRV':
            defs[o].add(p[2])
        elif len(p) == 2 and p[0] == 'U':
            uses[o].add(p[1])
objs = sorted(defs)
owner = {s: o for o, d in defs.items() for s in d}
graph = {o: sorted({owner[s] for s in uses[o] if s in owner and owner[s] != o}) for o in objs}
def name(o):
    b = os.path.basename(o)[:-2]
    return re.sub(r'^(libui_a|octopipe|octopipe_cuda)-', '', b)
def module(o):
    return name(o).split('_')[0]
index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
def strong(v):  # Tarjan's algorithm, iterative
    work = [(v, 0)]
    while work:
        v, i = work.pop()
        if i == 0:
            index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        recurse = False
        for j in range(i, len(graph[v])):
            w = graph[v][j]
            if w not in index:
                work.append((v, j + 1)); work.append((w, 0)); recurse = True; break
            elif w in on:
                low[v] = min(low[v], index[w])
        if recurse:
            continue
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            comps.append(comp)
        if work:
            u = work[-1][0]
            low[u] = min(low[u], low[v])
for v in objs:
    if v not in index:
        strong(v)
if sum(len(v) for v in graph.values()) == 0:
    print('1..1\nnot ok 1 - the symbol tables were not read (no file depends on another)')
    sys.exit(1)
bad = [c for c in comps if len(c) > 1 and len({module(o) for o in c}) > 1]
print('1..1')
for c in bad:
    print('# circle: ' + ' <-> '.join(sorted(name(o) + '.c' for o in c)))
if bad:
    print('not ok 1 - file-level circles between modules: %d, named above' % len(bad))
    sys.exit(1)
print('ok 1 - no file-level circle between modules (%d object files, %d file-to-file dependencies)' % (len(objs), sum(len(v) for v in graph.values())))
PY
