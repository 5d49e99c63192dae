"""Readers and writers: corpora in, kept documents and fingerprint files out. Every command
reads through here.

JSONL, Parquet, CSV/TSV, text lines and one-document files, plain or compressed, are read in
record batches of bounded size (pyarrow):

    sources.py            what the inputs are (formats, compression); light, for --help
    rejects.py            the policy for bad records
    batch.py              what readers yield, and ReadOptions: every reading setting
    outputs.py            Outputs: where a dedup writes, for every engine
    lines.py              JSONL and lines; tables.py CSV, TSV, Parquet; files.py one-document files
    dispatch.py           read any source; write the kept documents of any source
    corpus.py             a corpus every engine reads: files read again for each pass, or
                          texts and tables in memory (open_corpus, read_corpus)
    documents.py          (ids, texts) batches from files, folders or stdin, for the commands
                          that fingerprint documents one by one (fingerprint, pairs, index)
    writers.py            output formats
    encoding.py           text to UTF-8 bytes and back
    fingerprint_files.py  the ``neardup fingerprint`` output: a JSON header, then hex rows

May import: the root's shared modules (``_config``, ``_errors``, ``_atomic``, ``_prefetch``)
and ``_kernels``. This ``__init__`` imports nothing, so that ``--help`` stays light.
"""
