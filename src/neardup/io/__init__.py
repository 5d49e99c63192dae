"""Readers and writers of corpora: JSONL, Parquet, CSV/TSV, text lines and one-document
files, plain or compressed, in record batches of bounded size (pyarrow).

    sources.py   what the inputs are (formats, compression); light, for the CLI's --help
    rejects.py   the policy for bad records
    batch.py     what readers yield
    lines.py     JSONL and lines; tables.py CSV, TSV, Parquet; files.py one-document files
    dispatch.py  read any source; write the kept documents of any source
    writers.py   output formats
"""
