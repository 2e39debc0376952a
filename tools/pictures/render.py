#!/usr/bin/env python3
"""Draws what ``rmm-replay --pictures DIR`` wrote (or a snapshot saved from
``pool_memory_resource::snapshot().to_json()``) as SVG, with no dependency beyond Python 3.

    python3 tools/pictures/render.py DIR            # every timeline_*.csv and snapshot_*.json
    python3 tools/pictures/render.py FILE.json ...  # single snapshots

Writes, next to its input:
- ``timeline.svg``: live bytes (the log's) and reserved bytes (each resource's high-water mark
  so far) over the events, one line per resource;
- ``snapshot_<name>.svg``: one bar per chunk, drawn to scale (the widest bar is the largest
  chunk), each block coloured: allocated red, free green (darker shades: free blocks owned by a
  stream; light: owned by no stream), with the totals and the largest free block above.
"""
from __future__ import annotations

import csv
import glob
import json
import os
import sys
from xml.sax.saxutils import escape

MIB = float(1 << 20)
COLOURS = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]


def mib(n: float) -> str:
    return f"{n / MIB:,.1f} MiB"


def svg(width: int, height: int, body: list) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'font-family="sans-serif" font-size="12">\n'
            f'<rect width="{width}" height="{height}" fill="white"/>\n' + "\n".join(body) + "\n</svg>\n")


def text(x: float, y: float, s: str, **attrs) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(s)}</text>'


def snapshot_svg(snap: dict, title: str) -> str:
    chunks = snap["chunks"]
    width, left, bar, gap = 1000, 150, 18, 6
    widest = max((c["size"] for c in chunks), default=1)
    free, total, largest = snap["free_bytes"], snap["total_bytes"], snap["largest_free_block"]
    frag = 1.0 - largest / free if free else 0.0
    body = [text(10, 20, f"{title}: {len(chunks)} chunks, {mib(total)} held, "
                         f"{mib(total - free)} allocated, {mib(free)} free", font_weight="bold"),
            text(10, 36, f"largest free block {mib(largest)}; fragmentation of the free space "
                         f"(1 - largest / free) {frag:.2f}")]
    streams = sorted({b[3] for c in chunks for b in c["blocks"] if not b[2] and b[3]})
    shade = {s: ["#2ca02c", "#1b7a1b", "#4cc24c", "#0f5f0f"][i % 4] for i, s in enumerate(streams)}
    y = 50
    for c in chunks:
        scale = (width - left - 10) / widest
        label = f"{'shard ' + str(c['shard']) + ' ' if c['shard'] else ''}{mib(c['size'])}"
        body.append(text(5, y + 13, label))
        for offset, size, allocated, stream in c["blocks"]:
            colour = "#d62728" if allocated else shade.get(stream, "#a8e6a8")
            body.append(f'<rect x="{left + offset * scale:.2f}" y="{y}" '
                        f'width="{max(size * scale, 0.2):.2f}" height="{bar}" fill="{colour}"/>')
        body.append(f'<rect x="{left}" y="{y}" width="{c["size"] * scale:.2f}" height="{bar}" '
                    f'fill="none" stroke="black" stroke-width="0.5"/>')
        y += bar + gap
    legend = [("allocated", "#d62728"), ("free, owned by a stream", "#2ca02c"),
              ("free, owned by no stream", "#a8e6a8")]
    for i, (name, colour) in enumerate(legend):
        body.append(f'<rect x="{10 + 230 * i}" y="{y + 4}" width="12" height="12" fill="{colour}"/>')
        body.append(text(26 + 230 * i, y + 15, name))
    return svg(width, y + 30, body)


def timeline_svg(series: dict, title: str) -> str:
    width, height, left, bottom, top = 1000, 420, 80, 40, 40
    top_value = max(max(max(p[1], p[2]) for p in pts) for pts in series.values()) or 1
    last_event = max(max(p[0] for p in pts) for pts in series.values()) or 1
    sx = (width - left - 20) / last_event
    sy = (height - top - bottom) / top_value

    def path(points, k):
        return " ".join(f"{'M' if i == 0 else 'L'}{left + e * sx:.1f},{height - bottom - v[k] * sy:.1f}"
                        for i, (e, *v) in enumerate(points))

    body = [text(10, 20, title, font_weight="bold"),
            f'<line x1="{left}" y1="{height - bottom}" x2="{width - 20}" y2="{height - bottom}" stroke="black"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
            text(left, height - 10, "event"), text(5, top - 5, "MiB")]
    for i in range(5):
        v = top_value * i / 4
        body.append(text(5, height - bottom - v * sy + 4, f"{v / MIB:,.0f}"))
    first = next(iter(series.values()))
    body.append(f'<path d="{path([(e, l) for e, l, _ in first], 0)}" fill="none" stroke="black" '
                f'stroke-width="1.5"/>')
    legend = [("live (the log)", "black")]
    for i, (name, pts) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        body.append(f'<path d="{path([(e, r) for e, _, r in pts], 0)}" fill="none" '
                    f'stroke="{colour}" stroke-width="1.5"/>')
        peak = max(r for _, _, r in pts)
        legend.append((f"{name} reserved (peak {mib(peak)})", colour))
    for i, (name, colour) in enumerate(legend):  # bottom right, where the log is back near 0
        y = height - bottom - 16 * (len(legend) - i) - 4
        body.append(f'<rect x="{width - 330}" y="{y - 5}" width="12" height="3" fill="{colour}"/>')
        body.append(text(width - 312, y, name))
    return svg(width, height, body)


def read_timeline(path: str) -> tuple:
    with open(path) as f:
        rows = list(csv.DictReader(f))
    name = rows[0]["resource"] if rows else os.path.basename(path)
    return name, [(int(r["event"]), int(r["live_bytes"]), int(r["reserved_bytes"])) for r in rows]


def render_dir(directory: str) -> list:
    written = []
    series = dict(read_timeline(p) for p in sorted(glob.glob(os.path.join(directory, "timeline_*.csv"))))
    series = {k: v for k, v in series.items() if v}
    if series:
        out = os.path.join(directory, "timeline.svg")
        with open(out, "w") as f:
            f.write(timeline_svg(series, "live and reserved bytes over the log"))
        written.append(out)
    for p in sorted(glob.glob(os.path.join(directory, "snapshot_*.json"))):
        written.append(render_snapshot(p))
    return written


def render_snapshot(path: str) -> str:
    with open(path) as f:
        snap = json.load(f)
    out = os.path.splitext(path)[0] + ".svg"
    with open(out, "w") as f:
        f.write(snapshot_svg(snap, os.path.splitext(os.path.basename(path))[0]))
    return out


def main(args: list) -> int:
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    written = []
    for a in args:
        written += render_dir(a) if os.path.isdir(a) else [render_snapshot(a)]
    if not written:
        print("nothing to draw in " + " ".join(args), file=sys.stderr)
        return 1
    print("\n".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
