#!/usr/bin/env python3
"""A flame graph (SVG) from `perf script` output, standard library only (Debian has no flamegraph
package). Stacks are folded root first; each box is a frame, its width its share of the samples.
Swift symbols are shortened (module.Type.method, from the mangled name's readable words).

    perf record -F 5000 -g -p PID -- sleep 10
    perf script | python3 bench/flame.py --title "dockd, 64 subscribers" > out.svg
    perf script | python3 bench/flame.py --folded   # the folded stacks instead (flamegraph.pl's input)
"""
import argparse
import html
import re
import sys
from collections import defaultdict

def swift_words(mangled):
    """The length-prefixed identifiers of a Swift mangled name, in order (`8NIOPosix` → NIOPosix)."""
    words, i = [], 0
    while i < len(mangled):
        if mangled[i].isdigit() and (i == 0 or not mangled[i - 1].isdigit()):
            j = i
            while j < len(mangled) and mangled[j].isdigit():
                j += 1
            n = int(mangled[i:j])
            word = mangled[j:j + n]
            if n and len(word) == n and (word[0].isalpha() or word[0] == "_"):
                words.append(word)
                i = j + n
                continue
            i = j
            continue
        i += 1
    return words


def short(symbol):
    """A readable name: C and kernel symbols as they are, Swift ones as module.Type.member."""
    symbol = symbol.split("+0x")[0]
    if not symbol.startswith("$s"):
        return symbol
    words = []
    for word in swift_words(symbol[2:]):
        if len(word) >= 3 and word not in words and not re.fullmatch(r"[0-9A-F]{32}", word):
            words.append(word)
        if len(words) == 3:
            break
    return ".".join(words) or symbol[:40]


def folded(stream):
    counts = defaultdict(int)
    frames = []
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if frames:
                counts[";".join(reversed(frames))] += 1
                frames = []
            continue
        if not line.startswith((" ", "\t")):
            continue  # the event's header line
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        name = parts[1].rsplit(" (", 1)[0]
        frames.append(short(name))
    if frames:
        counts[";".join(reversed(frames))] += 1
    return counts


def svg(counts, title, width=1200, row=16):
    total = sum(counts.values())
    tree = {}
    for stack, n in counts.items():
        node = tree
        for frame in stack.split(";"):
            child = node.setdefault(frame, [0, {}])
            child[0] += n
            node = child[1]
    boxes = []

    def walk(node, x, depth):
        for name, (n, children) in sorted(node.items()):
            w = n / total * width
            if w >= 0.5:
                boxes.append((x, depth, w, name, n))
                walk(children, x, depth + 1)
            x += w
    walk(tree, 0.0, 0)
    height = (max((b[1] for b in boxes), default=0) + 3) * row
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" font-size="11">',
           f'<text x="4" y="13" font-size="13">{html.escape(title)} — {total} samples (width = share of samples)</text>']
    for x, depth, w, name, n in boxes:
        y = height - (depth + 1) * row
        hue = 20 + (hash(name) % 40)
        label = html.escape(name)
        out.append(f'<g><title>{label}: {n} samples, {100 * n / total:.1f} %</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" fill="hsl({hue},80%,60%)"/>')
        if w > 40:
            chars = int(w / 6.6)
            out.append(f'<text x="{x + 2:.1f}" y="{y + 11}">{html.escape(name[:chars])}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--title", default="perf samples")
    ap.add_argument("--folded", action="store_true", help="print folded stacks instead of an SVG")
    args = ap.parse_args()
    counts = folded(sys.stdin)
    if args.folded:
        for stack, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            print(f"{stack} {n}")
    else:
        print(svg(counts, args.title))


if __name__ == "__main__":
    main()
