"""write_report(): real clusters and pairs files (Parquet and CSV) in, a self-contained HTML page
and valid PNG plots out."""

from __future__ import annotations

import base64
import importlib.util
import re
import subprocess
import sys

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from neardup import FormatError
from neardup.report.html import write_report

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib: pip install 'neardup[report]'"
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

CLUSTERS = {
    "id": ["001", "d2", "d3", "<b>4</b>", "d5"],
    "cluster": [0, 0, 0, 1, 1],
    "representative": ["001", "001", "001", "<b>4</b>", "<b>4</b>"],
    "distance": [0, 2, 5, 0, 3],
}
PAIRS = {
    "id_a": ["001", "001", "d2", "<b>4</b>"],
    "id_b": ["d2", "d3", "d3", "d5"],
    "distance": [2, 5, 4, 3],
    "similarity": [0.9, 0.8, 0.85, 0.95],
}
TEXTS = {
    "001": "x" * 290 + "KEPT" + "y" * 20 + "CUT",
    "d2": "<script>alert('hi')</script> & more",
    "<b>4</b>": "fourth",
}


def write(path, columns):
    table = pa.table(columns)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        delimiter = "\t" if path.suffix == ".tsv" else ","
        pa_csv.write_csv(table, path, pa_csv.WriteOptions(delimiter=delimiter))
    return path


def summary(page):
    """The summary table as {name: shown value}."""
    return dict(re.findall(r"<tr><th>([^<]*)</th><td class=n>([^<]*)</td></tr>", page))


@pytest.fixture(params=["parquet", "csv", "tsv"])
def inputs(request, tmp_path):
    ext = request.param
    return (write(tmp_path / f"clusters.{ext}", CLUSTERS), write(tmp_path / f"pairs.{ext}", PAIRS))


@needs_matplotlib
def test_report_has_the_numbers_plots_and_clusters(inputs, tmp_path):
    from matplotlib import image

    clusters, pairs = inputs
    out = tmp_path / "report" / "nested"
    index = write_report(out, clusters=clusters, pairs=pairs, texts=TEXTS)
    assert index == out / "index.html"
    pngs = ["cluster_sizes.png", "pair_distances.png", "representative_distances.png", "similarity.png"]
    assert sorted(p.name for p in out.iterdir()) == sorted(["index.html", *pngs])  # no temporaries
    page = index.read_text("utf-8")
    for name in pngs:
        data = (out / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and data.endswith(b"IEND\xaeB`\x82")
        assert image.imread(out / name).shape[:2] == (380, 700)
        assert base64.b64encode(data).decode() in page  # embedded, the same image
    numbers = summary(page)
    assert numbers["documents in clusters"] == "5" and numbers["clusters"] == "2"
    assert numbers["documents beyond one per cluster"] == "3"
    assert numbers["max cluster size"] == "3" and numbers["mean cluster size"] == "2.500"
    assert numbers["max distance to representative"] == "5"
    assert numbers["mean distance to representative"] == "3.333"  # 2, 5 and 3: not the 0s
    assert numbers["pairs"] == "4" and numbers["min pair distance"] == "2"
    assert numbers["median pair distance"] == "3.500" and numbers["max pair distance"] == "5"
    assert numbers["mean similarity"] == "0.875" and numbers["max similarity"] == "0.950"
    # The largest cluster first, representative first; ids kept as text ("001", not 1).
    first, second = page.index("Cluster 0: 3 documents"), page.index("Cluster 1: 2 documents")
    assert first < second
    assert page.index("<td>001</td>") < page.index("<td>d2</td>") < page.index("<td>d3</td>") < second


@needs_matplotlib
def test_report_is_self_contained(inputs, tmp_path):
    clusters, pairs = inputs
    page = write_report(tmp_path / "r", clusters=clusters, pairs=pairs, texts=TEXTS).read_text("utf-8")
    outside_images = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"https?:|//[a-z]", outside_images, re.IGNORECASE)
    assert "<link" not in page and "<script" not in page and "@import" not in page and "url(" not in page
    sources = re.findall(r"""(?:src|href)\s*=\s*["']?([^"' >]*)""", page)
    assert len(sources) == 4 and all(s.startswith("data:image/png;base64,") for s in sources)


@needs_matplotlib
def test_texts_and_ids_are_escaped_and_cut(inputs, tmp_path):
    clusters, pairs = inputs
    page = write_report(tmp_path / "r", clusters=clusters, pairs=pairs, texts=TEXTS).read_text("utf-8")
    assert "<script>" not in page and "<b>4</b>" not in page
    assert "&lt;script&gt;alert(&#x27;hi&#x27;)&lt;/script&gt; &amp; more" in page
    assert "&lt;b&gt;4&lt;/b&gt;" in page
    assert "x" * 290 + "KEPT" in page and "CUT" not in page  # cut to 300 characters
    assert "(no text)" in page  # d3 and d5 have none


@needs_matplotlib
def test_top_and_members_limit_the_table(inputs, tmp_path):
    clusters, _pairs = inputs
    page = write_report(tmp_path / "r", clusters=clusters, top=1, members=2).read_text("utf-8")
    assert "Cluster 0: 3 documents" in page and "Cluster 1" not in page
    assert "<td>d2</td>" in page and "<td>d3</td>" not in page and "and 1 more" in page
    assert "<th>text</th>" not in page  # no texts given


@needs_matplotlib
def test_pairs_alone_without_similarity(tmp_path):
    pairs = write(tmp_path / "pairs.csv", {k: v for k, v in PAIRS.items() if k != "similarity"})
    index = write_report(tmp_path / "r", pairs=pairs)
    assert sorted(p.name for p in index.parent.iterdir()) == ["index.html", "pair_distances.png"]
    numbers = summary(index.read_text("utf-8"))
    assert numbers["pairs"] == "4" and "clusters" not in numbers and "mean similarity" not in numbers


@needs_matplotlib
def test_clusters_alone_with_wide_sizes(tmp_path):
    n_big = 400
    ids = [f"big{i}" for i in range(n_big)] + [f"s{i}" for i in range(60)]
    labels = [0] * n_big + [1 + i // 2 for i in range(60)]
    reps = ["big0"] * n_big + [f"s{i - i % 2}" for i in range(60)]
    clusters = write(
        tmp_path / "c.parquet",
        {"id": ids, "cluster": labels, "representative": reps, "distance": [i % 4 for i in range(len(ids))]},
    )
    index = write_report(tmp_path / "r", clusters=clusters)
    numbers = summary(index.read_text("utf-8"))
    assert numbers["clusters"] == "31" and numbers["max cluster size"] == "400"
    assert numbers["documents in clusters"] == "460"
    assert (index.parent / "cluster_sizes.png").read_bytes().startswith(PNG_SIGNATURE)


@needs_matplotlib
def test_empty_files(tmp_path):
    clusters = tmp_path / "c.csv"
    clusters.write_text("id,cluster,representative,distance\n")
    pairs = tmp_path / "p.csv"
    pairs.write_text("id_a,id_b,distance,similarity\n")
    numbers = summary(write_report(tmp_path / "r", clusters=clusters, pairs=pairs).read_text("utf-8"))
    assert numbers["clusters"] == "0" and numbers["pairs"] == "0"


@pytest.mark.parametrize("ext", ["parquet", "csv", "tsv"])
@pytest.mark.parametrize(
    "kind, columns, missing",
    [
        ("clusters", CLUSTERS, "representative"),
        ("clusters", CLUSTERS, "distance"),
        ("pairs", PAIRS, "id_b"),
        ("pairs", PAIRS, "distance"),
    ],
)
def test_a_missing_column_is_named_with_the_file(tmp_path, ext, kind, columns, missing):
    path = write(tmp_path / f"{kind}.{ext}", {k: v for k, v in columns.items() if k != missing})
    with pytest.raises(FormatError, match=rf"{re.escape(str(path))}.*no column '{missing}'"):
        write_report(tmp_path / "r", **{kind: path})
    assert not (tmp_path / "r" / "index.html").exists()


def test_bad_inputs(tmp_path):
    with pytest.raises(ValueError, match="clusters=, pairs="):
        write_report(tmp_path / "r")
    other = tmp_path / "pairs.json"
    other.write_text("{}")
    with pytest.raises(FormatError, match=r"pairs\.json.*\.parquet, \.csv or \.tsv"):
        write_report(tmp_path / "r", pairs=other)
    text_distance = write(tmp_path / "p.csv", {**PAIRS, "distance": ["near"] * 4})
    with pytest.raises(FormatError, match=r"'distance'.*not numeric"):
        write_report(tmp_path / "r", pairs=text_distance)
    with pytest.raises(FormatError, match="cannot read"):
        write_report(tmp_path / "r", pairs=tmp_path / "missing.parquet")


def test_missing_matplotlib_names_the_extra(tmp_path, monkeypatch):
    pairs = write(tmp_path / "p.csv", PAIRS)
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(
        ImportError, match=r'"report" extra \(matplotlib is not installed\): pip install "neardup\[report\]"'
    ):
        write_report(tmp_path / "r", pairs=pairs)


def test_importing_the_module_loads_neither_matplotlib_nor_pyarrow():
    code = (
        "import sys, neardup.report.html; "
        "assert not {'matplotlib', 'pyarrow'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@needs_matplotlib
def test_csv_ids_that_look_like_numbers_stay_text(tmp_path):
    clusters = tmp_path / "c.csv"
    clusters.write_text("id,cluster,representative,distance\n007,1,007,0\n0080,1,007,4\n")
    page = write_report(tmp_path / "r", clusters=clusters, texts={"0080": "eighty"}).read_text("utf-8")
    assert "<td>007</td>" in page and "<td>0080</td>" in page and "eighty" in page
