"""Checks an attention map that lcc --emit=attention-map --input drew.

Usage:
  attention_map_keys.py lsh MAP.svg BUCKETS.npy --bucket-size=B --seq=N [--causal]
  attention_map_keys.py routed MAP.svg Q.npy K.npy CENTROIDS.npy --window=W [--causal]

The map of a short sequence has a cell per (query, key) pair: the cells
drawn must be exactly the pairs the form scores for batch 0, head 0,
worked out here from the reference's LSH buckets (lcc-reference
--op=lsh_buckets) or, for routed attention, from the inputs in numpy
(double precision); and the colour strips beside it must put together the
tokens that share a bucket (in round 1) or a cluster. Prints "ok: N pairs"
or the first difference, exiting 1.
"""

import argparse
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np

SVG = "{http://www.w3.org/2000/svg}"


def group_of(root, name):
    for group in root.iter(SVG + "g"):
        if group.get("class") == name:
            return group
    sys.exit(f"no <g class='{name}'> in the map")


def drawn_pairs(root, queries, keys):
    """The (query, key) cells of the map, one token a cell."""
    cells = [r for r in group_of(root, "tiles").iter(SVG + "rect")
             if r.get("fill") != "none"]
    frame = [r for r in group_of(root, "tiles").iter(SVG + "rect")
             if r.get("fill") == "none"][0]
    size = float(frame.get("width")) / keys
    if abs(float(frame.get("height")) / queries - size) > 0.01:
        sys.exit("the map is not one token a cell")
    pairs = set()
    for rect in cells:
        if abs(float(rect.get("width")) - size) > 0.06:
            sys.exit(f"a cell of {rect.get('width')} pixels, expected {size}")
        pairs.add((round(float(rect.get("y")) / size),
                   round(float(rect.get("x")) / size)))
    if len(pairs) != len(cells):
        sys.exit("two cells on one pair")
    return pairs


def strip_colours(root, count, across):
    """Each token's colour in the strip down (queries) or across (keys), or
    None when there is no such strip."""
    runs = []
    for rect in group_of(root, "groups").iter(SVG + "rect"):
        x, y = float(rect.get("x")), float(rect.get("y"))
        if (y < 0 <= x) != across:
            continue
        start = x if across else y
        size = float(rect.get("width" if across else "height"))
        runs.append((start, start + size, rect.get("fill")))
    if not runs:
        return None
    step = max(end for _, end, _ in runs) / count
    return [next(f for a, b, f in runs if a <= (t + 0.5) * step < b)
            for t in range(count)]


def same_partition(colours, groups, what):
    """Tokens share a colour exactly when they share a group."""
    by_colour, by_group = {}, {}
    for token, (colour, group) in enumerate(zip(colours, groups)):
        if by_colour.setdefault(colour, group) != group or \
                by_group.setdefault(group, colour) != colour:
            sys.exit(f"{what}: token {token} is coloured {colour}, its group "
                     f"{group} is coloured {by_group[group]}")


def lsh_pairs(buckets, bucket_size, seq, causal):
    """Reformer's chunks over the rounds' sorted orders laid end to end."""
    rounds, padded = buckets.shape
    order = np.concatenate(
        [np.argsort(buckets[r], kind="stable") for r in range(rounds)])
    chunks = order.reshape(-1, bucket_size)
    pairs = set()
    for g, chunk in enumerate(chunks):
        seen = np.concatenate([chunks[g - 1], chunk])
        for q in chunk:
            if q >= seq:
                continue
            for k in seen:
                if k < seq and k != q and not (causal and k > q):
                    pairs.add((int(q), int(k)))
    return pairs


def unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def routed_pairs(q, k, centroids, window, causal):
    qu, ku, cu = unit(q), unit(k), unit(centroids)
    clusters = np.argmax(qu @ cu.T, axis=1)
    windows = [np.argsort(-(ku @ c), kind="stable")[:window] for c in cu]
    pairs = set()
    for i, c in enumerate(clusters):
        for j in windows[c]:
            if not (causal and j > i):
                pairs.add((i, int(j)))
    return pairs, clusters


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("form", choices=["lsh", "routed"])
    parser.add_argument("svg")
    parser.add_argument("arrays", nargs="+")
    parser.add_argument("--bucket-size", type=int)
    parser.add_argument("--seq", type=int)
    parser.add_argument("--window", type=int)
    parser.add_argument("--causal", action="store_true")
    args = parser.parse_args()
    root = ElementTree.parse(args.svg).getroot()
    if args.form == "lsh":
        buckets = np.load(args.arrays[0])[0, 0].astype(np.int64)
        expected = lsh_pairs(buckets, args.bucket_size, args.seq, args.causal)
        queries = keys = args.seq
        query_groups = key_groups = buckets[0, :args.seq]
    else:
        q, k = (np.load(a)[0, 0].astype(np.float64) for a in args.arrays[:2])
        centroids = np.load(args.arrays[2])[0].astype(np.float64)
        expected, query_groups = routed_pairs(q, k, centroids, args.window,
                                              args.causal)
        queries, keys, key_groups = len(q), len(k), None
    drawn = drawn_pairs(root, queries, keys)
    if drawn != expected:
        missing = sorted(expected - drawn)[:5]
        extra = sorted(drawn - expected)[:5]
        sys.exit(f"the map differs: {len(expected - drawn)} pairs missing "
                 f"{missing}, {len(drawn - expected)} extra {extra}")
    same_partition(strip_colours(root, queries, across=False), query_groups,
                   "queries")
    if key_groups is not None:
        same_partition(strip_colours(root, keys, across=True), key_groups,
                       "keys")
    elif strip_colours(root, keys, across=True) is not None:
        sys.exit("keys coloured by a group they have none of")
    print(f"ok: {len(drawn)} pairs")


if __name__ == "__main__":
    main()
