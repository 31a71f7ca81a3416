#!/usr/bin/env python3
"""The import graph of fabriclab's Rust code, from its `use` lines and paths.

Reads crates/*/src (tests, unit-test modules and benches left out), maps every reference of the form
`crate::a::b`, `super::a`, `self::a` or `<other workspace crate>::a` to the module file it
names (the longest prefix that is a module), and reports:

- the layer graph: arrows between the layers of docs/architecture.md with how many file-to-file
  references each carries, marking the arrows that run back up (from a lower layer to a higher);
- the circles: sets of two or more files that reach each other (strongly connected components).

    scripts/import-graph.py            # the report
    scripts/import-graph.py --check    # exit 1 if an arrow runs back up or a circle spans 3+ files
    scripts/import-graph.py --repo DIR # another checkout (an older commit's worktree, to compare)

It reads text, so a path written in a comment or a string counts too; doc comments are skipped.
Python 3 standard library only.
"""

import argparse
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Layers from the bottom up (docs/architecture.md). A module may import its own layer and any
# layer below it. Keys are module paths; the longest matching prefix decides a file's layer.
LAYERS = [
    ("engine", ["fabriclab_engine"]),
    ("workload", ["fabriclab_workload"]),
    ("net", ["fabriclab::net", "fabriclab::files"]),
    ("metrics", ["fabriclab::metrics"]),
    ("transport", ["fabriclab::transport"]),
    ("config", ["fabriclab::config"]),
    ("sim", ["fabriclab::sim", "fabriclab::estimate", "fabriclab::sweep", "fabriclab"]),
    ("udp", ["fabriclab_udp"]),
    ("repro", ["fabriclab_repro"]),
    ("front-ends", ["fabriclab_cli", "fabriclab_python"]),
]


def crates():
    """(crate name as Rust spells it, its src folder) for each workspace crate."""
    out = []
    base = os.path.join(ROOT, "crates")
    for d in sorted(os.listdir(base)):
        toml = os.path.join(base, d, "Cargo.toml")
        if not os.path.exists(toml):
            continue
        name = re.search(r'^name\s*=\s*"([^"]+)"', open(toml).read(), re.M).group(1)
        out.append((name.replace("-", "_"), os.path.join(base, d, "src")))
    return out


def module_of(crate, src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"):
        rel = rel[:-1]
    return "::".join([crate] + rel)


def strip_comments(text):
    """Comments and the unit tests (`#[cfg(test)] mod tests`, at a file's end by convention) out."""
    text = re.split(r"#\[cfg\(test\)\]\s*mod \w+\s*\{", text)[0]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def use_paths(stmt):
    """Expands a `use` tree into its paths: `a::{b, c::{d}}` -> a::b, a::c::d."""
    stmt = re.sub(r"\s+", "", stmt)
    m = re.match(r"^(.*?)::\{(.*)\}$", stmt)
    if not m:
        return [stmt.split(" as ")[0]]
    head, body = m.groups()
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    return [head + "::" + p2 for p in parts if p for p2 in use_paths(p)]


def references(text, crate_names):
    """The paths a file names: its `use` paths, and inline paths that start at `crate`, `super`,
    `self`, a workspace crate, or a name the file's `use` lines bound (an alias or a child)."""
    text = strip_comments(text)
    uses = []
    for stmt in re.findall(r"\buse\s+([^;]+);", text):
        uses.extend(p for p in use_paths(stmt) if p)
    bound = {}
    for u in uses:
        segs = u.split("::")
        name = segs[-2] if segs[-1] == "self" and len(segs) > 1 else segs[-1]
        bound[name] = "::".join(segs[:-1]) if segs[-1] == "self" else u
    heads = set(["crate", "super", "self"] + crate_names) | set(bound)
    inline = re.findall(r"(?<![\w:])(\w+(?:::\w+)+)", text)
    refs = list(uses)
    for p in inline:
        head, _, rest = p.partition("::")
        if head in ("crate", "super", "self") or head in crate_names:
            refs.append(p)
        elif head in bound:
            refs.append(bound[head] + "::" + rest)
    return refs


def resolve(path, here, crate, modules, crate_names):
    segs = path.split("::")
    if segs[0] == "crate":
        segs = [crate] + segs[1:]
    elif segs[0] in ("super", "self"):
        cur = here.split("::")
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                cur = cur[:-1]
            segs = segs[1:]
        segs = cur + segs
    elif segs[0] == "fabriclab" and crate != "fabriclab":
        pass
    elif segs[0] in crate_names:
        pass
    elif here + "::" + segs[0] in modules:
        segs = here.split("::") + segs  # a child module named without `self::`
    else:
        return None
    for n in range(len(segs), 0, -1):
        cand = "::".join(segs[:n])
        if cand in modules:
            return cand
    return None


def layer_of(module):
    best = None
    for i, (name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if module == p or module.startswith(p + "::"):
                if best is None or len(p) > best[2]:
                    best = (i, name, len(p))
    return best[:2] if best else (None, "?")


def circles(edges, nodes):
    """Strongly connected components of two or more nodes (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 on an arrow back up or a circle of 3+ files")
    ap.add_argument("--repo", default=ROOT, help="the checkout to read (default: this one)")
    args = ap.parse_args()
    ROOT = os.path.abspath(args.repo)
    cs = crates()
    names = [c for c, _ in cs]
    files = {}
    for crate, src in cs:
        for d, _, fs in os.walk(src):
            for f in fs:
                p = os.path.join(d, f)
                if f.endswith(".rs") and f != "tests.rs" and os.sep + "tests" + os.sep not in p:
                    files[module_of(crate, src, p)] = (crate, p)
    edges = defaultdict(set)
    for mod, (crate, p) in files.items():
        for ref in references(open(p, encoding="utf-8").read(), names):
            t = resolve(ref, mod, crate, files, names)
            if t and t != mod and not mod.startswith(t + "::"):
                edges[mod].add(t)
    layer_edges = defaultdict(int)
    back = []
    for a, ts in edges.items():
        for b in ts:
            (la, na), (lb, nb) = layer_of(a), layer_of(b)
            if na != nb:
                layer_edges[(na, nb)] += 1
                if la is not None and lb is not None and lb > la:
                    back.append((a, b))
    print("layers, bottom up: " + " < ".join(n for n, _ in LAYERS))
    print("\nlayer arrows (file-to-file references):")
    order = {n: i for i, (n, _) in enumerate(LAYERS)}
    for (a, b), n in sorted(layer_edges.items(), key=lambda e: (-order.get(e[0][0], -1), order.get(e[0][1], -1))):
        mark = "   BACK UP" if order.get(b, -1) > order.get(a, -1) else ""
        print(f"  {a:>10} -> {b:<10} {n:4}{mark}")
    print(f"\narrows that run back up: {len(back)}")
    for a, b in sorted(back):
        print(f"  {a} -> {b}")
    cyc = circles(edges, set(files))
    print(f"\ncircles (files that reach each other): {len(cyc)}")
    for c in cyc:
        shown = ", ".join(c[:12]) + (f", ... ({len(c)} files)" if len(c) > 12 else "")
        print(f"  {len(c)} files: {shown}")
    # Two files that name each other (a port and its control queue) are one unit split for
    # length; a circle through three or more files is a layer nobody can read alone.
    if args.check and (back or any(len(c) > 2 for c in cyc)):
        sys.exit(1)


if __name__ == "__main__":
    main()
