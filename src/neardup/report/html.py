"""An HTML report of what ``neardup dedup`` found: summary numbers, plots, the largest clusters.

The inputs are its clusters file (``id, cluster, representative, distance``) and pairs file
(``id_a, id_b, distance`` and, after verification, ``similarity``), Parquet or CSV by extension.
The report is one self-contained ``index.html`` (plots embedded as data URIs, inline CSS, no
external resources) beside the same plots as PNG files. matplotlib and pyarrow load only here.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import atomic_write
from .._errors import ConfigError, FormatError
from .._extras import require

CLUSTER_COLUMNS = {"id": "str", "cluster": "int", "representative": "str", "distance": "int"}
PAIR_COLUMNS = {"id_a": "str", "id_b": "str", "distance": "int"}
_SAMPLE_CHARS = 300

_CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222}
h1,h2,h3{font-weight:600}table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
td.n{text-align:right;font-variant-numeric:tabular-nums}.rep{background:#eef5ff}
.text{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;max-width:50em}
img{max-width:100%;margin:.5em 0}.muted{color:#777}"""


def _read(
    path: str | os.PathLike, columns: dict[str, str], optional: dict[str, str], what: str
) -> dict[str, np.ndarray]:
    """The named columns of a Parquet or CSV file as numpy arrays: ids as str (object), integers
    as int64, floats as float64 (null -> NaN). A missing column raises FormatError."""
    import pyarrow as pa
    import pyarrow.csv as csv
    import pyarrow.parquet as pq

    path = Path(path)
    wanted = {**columns, **optional}
    try:
        if path.suffix.lower() == ".parquet":
            names = pq.read_schema(path).names
            table = pq.read_table(path, columns=[c for c in wanted if c in names])
        elif path.suffix.lower() in (".csv", ".tsv"):
            types = {c: pa.string() for c, kind in wanted.items() if kind == "str"}
            delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
            table = csv.read_csv(
                path,
                parse_options=csv.ParseOptions(delimiter=delimiter),
                convert_options=csv.ConvertOptions(column_types=types),
            )
            names = table.column_names
        else:
            raise FormatError(
                f"{path}: a {what} file must end in .parquet, .csv or .tsv, "
                f"not {path.suffix or 'no extension'!r}"
            )
    except (OSError, pa.ArrowException) as e:
        raise FormatError(f"{path}: cannot read the {what} file ({e})") from None
    for column in columns:
        if column not in names:
            raise FormatError(
                f"{path}: the {what} file has no column {column!r}; it needs "
                f"{', '.join(columns)} (found {', '.join(names) or 'none'})"
            )
    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64()}
    out = {}
    for column, kind in wanted.items():
        if column in names:
            try:
                array = table.column(column).cast(types[kind])
            except pa.ArrowException as e:
                raise FormatError(
                    f"{path}: column {column!r} of the {what} file is not "
                    f"{'text' if kind == 'str' else 'numeric'} ({e})"
                ) from None
            if kind == "int" and array.null_count:
                raise FormatError(f"{path}: column {column!r} of the {what} file has empty values")
            out[column] = array.to_numpy(zero_copy_only=False)
    return out


def _stats(values: np.ndarray) -> dict[str, float]:
    values = values[np.isfinite(values)] if values.dtype.kind == "f" else values
    if values.size == 0:
        return {}
    return {"min": values.min(), "median": np.median(values), "mean": values.mean(), "max": values.max()}


def _number(x: Any) -> str:
    if isinstance(x, (int, np.integer)) or float(x).is_integer():
        return f"{int(x):,}"
    return f"{float(x):,.3f}"


def _png(draw: Any, values: np.ndarray, title: str, xlabel: str, ylabel: str) -> bytes:
    """One plot as PNG bytes, drawn on a Figure of its own (no pyplot, no global state)."""
    require("report", "matplotlib", needed_by="the report (neardup report, neardup.write_report)")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 3.8), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    if values.size:
        draw(ax, values)
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    out = io.BytesIO()
    figure.savefig(out, format="png", metadata={"Software": None})
    return out.getvalue()


def _integer_bars(ax: Any, values: np.ndarray) -> None:
    """Count of each integer value, one bar per value."""
    low = int(values.min())
    counts = np.bincount(values - low)
    ax.bar(np.arange(low, low + counts.size), counts, width=0.9)
    if counts.max() > 100 * max(1, counts[counts > 0].min()):
        ax.set_yscale("log")


def _sizes(ax: Any, sizes: np.ndarray) -> None:
    """Clusters by size; log-log over logarithmic bins when sizes span a wide range."""
    if sizes.max() <= 50:
        _integer_bars(ax, sizes)
        return
    edges = np.unique(np.round(np.geomspace(2, sizes.max() + 1, 40)))
    ax.hist(sizes, bins=edges)
    ax.set_xscale("log")
    ax.set_yscale("log")


def _similarity(ax: Any, values: np.ndarray) -> None:
    ax.hist(values[np.isfinite(values)], bins=50)


def _sample(text: str | None) -> str:
    if text is None:
        return "<span class=muted>(no text)</span>"
    cut = text[:_SAMPLE_CHARS] + ("…" if len(text) > _SAMPLE_CHARS else "")
    return html.escape(cut)


def _clusters_html(
    data: dict[str, np.ndarray], texts: Mapping[str, str] | None, top: int, members: int
) -> str:
    ids, cluster, rep, dist = data["id"], data["cluster"], data["representative"], data["distance"]
    labels, sizes = np.unique(cluster, return_counts=True)
    order = np.lexsort((labels, -sizes))[:top]
    if order.size == 0:
        return ""
    parts = [f"<h2>The {len(order)} largest clusters</h2>"]
    for label, size in zip(labels[order].tolist(), sizes[order].tolist()):
        rows = np.flatnonzero(cluster == label)
        rows = rows[np.lexsort((ids[rows].astype(str), dist[rows], ids[rows] != rep[rows]))]
        parts.append(
            f"<h3>Cluster {label}: {size:,} documents, representative "
            f"<code>{html.escape(str(rep[rows[0]]))}</code></h3><table><tr><th>id</th>"
            f"<th>distance</th>{'<th>text</th>' if texts is not None else ''}</tr>"
        )
        for r in rows[:members].tolist():
            row = f"<td>{html.escape(str(ids[r]))}</td><td class=n>{int(dist[r])}</td>"
            if texts is not None:
                row += f"<td class=text>{_sample(texts.get(ids[r]))}</td>"
            parts.append(f"<tr{' class=rep' if ids[r] == rep[r] else ''}>{row}</tr>")
        parts.append("</table>")
        if rows.size > members:
            parts.append(f"<p class=muted>… and {rows.size - members:,} more</p>")
    return "\n".join(parts)


def write_report(
    out_dir: str | os.PathLike,
    *,
    clusters: str | os.PathLike | None = None,
    pairs: str | os.PathLike | None = None,
    texts: Mapping[str, str] | None = None,
    top: int = 10,
    members: int = 20,
) -> Path:
    """Write an HTML report of dedup results into ``out_dir`` (created if missing).

    Args:
        clusters: the clusters file (.parquet or .csv), or None.
        pairs: the pairs file (.parquet or .csv), or None; at least one of the two is needed.
        texts: id -> text, for sample texts in the cluster table (shown HTML-escaped, cut to
            300 characters); None for ids alone.
        top: how many of the largest clusters to list; members: how many documents of each.

    Writes ``index.html`` (self-contained) and the PNG plots ``pair_distances.png``,
    ``similarity.png`` (pairs with a similarity column), ``cluster_sizes.png`` and
    ``representative_distances.png``, each atomically. Returns the path of ``index.html``.
    A file without a needed column raises FormatError naming the file and column.
    """
    if clusters is None and pairs is None:
        raise ConfigError("write_report needs clusters=, pairs= or both")
    if (
        isinstance(top, bool)
        or not isinstance(top, int)
        or top < 0
        or isinstance(members, bool)
        or not isinstance(members, int)
        or members < 1
    ):
        raise ConfigError(f"top={top!r} must be an integer >= 0 and members={members!r} >= 1")
    summary: list[tuple[str, Any]] = []
    plots: list[tuple[str, bytes]] = []
    body = ""
    if clusters is not None:
        data = _read(clusters, CLUSTER_COLUMNS, {}, "clusters")
        sizes = np.unique(data["cluster"], return_counts=True)[1]
        others = data["distance"][data["id"] != data["representative"]]
        summary += [
            ("documents in clusters", data["id"].size),
            ("clusters", sizes.size),
            ("documents beyond one per cluster", data["id"].size - sizes.size),
        ]
        summary += [(f"{k} cluster size", v) for k, v in _stats(sizes).items()]
        summary += [(f"{k} distance to representative", v) for k, v in _stats(others).items()]
        plots.append(
            (
                "cluster_sizes.png",
                _png(_sizes, sizes, "Clusters by size", "documents in the cluster", "clusters"),
            )
        )
        plots.append(
            (
                "representative_distances.png",
                _png(
                    _integer_bars,
                    others,
                    "Distance to the cluster's representative",
                    "Hamming distance (bits)",
                    "documents",
                ),
            )
        )
        body = _clusters_html(data, texts, top, members)
    if pairs is not None:
        data = _read(pairs, PAIR_COLUMNS, {"similarity": "float"}, "pairs")
        summary.append(("pairs", data["distance"].size))
        summary += [(f"{k} pair distance", v) for k, v in _stats(data["distance"]).items()]
        plots.insert(
            0,
            (
                "pair_distances.png",
                _png(
                    _integer_bars,
                    data["distance"],
                    "Distance of near-duplicate pairs",
                    "Hamming distance (bits)",
                    "pairs",
                ),
            ),
        )
        if "similarity" in data:
            summary += [(f"{k} similarity", v) for k, v in _stats(data["similarity"]).items()]
            plots.insert(
                1,
                (
                    "similarity.png",
                    _png(
                        _similarity, data["similarity"], "Verified similarity of pairs", "similarity", "pairs"
                    ),
                ),
            )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, png in plots:
        with atomic_write(out / name, "wb") as f:
            f.write(png)
    sources = ", ".join(
        f"{what} <code>{html.escape(str(path))}</code>"
        for what, path in (("clusters", clusters), ("pairs", pairs))
        if path is not None
    )
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td class=n>{_number(v)}</td></tr>" for k, v in summary)
    images = "".join(
        f'<img alt="{name[:-4]}" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">'
        for name, png in plots
    )
    page = (
        f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><title>neardup report</title>"
        f"<style>{_CSS}</style></head><body><h1>neardup report</h1><p class=muted>From "
        f"{sources}.</p><h2>Summary</h2><table>{rows}</table><h2>Plots</h2>{images}\n"
        f"{body}\n</body></html>\n"
    )
    index = out / "index.html"
    with atomic_write(index, "wb") as f:
        f.write(page.encode("utf-8"))
    return index
