"""The file to hand ``spark-submit``, which runs a file, not a module:

    spark-submit --master yarn ... "$(python -c 'import neardup.cli.spark_submit as m; print(m.__file__)')" \\
        dedup s3://bucket/crawl/ -o s3://bucket/kept.parquet --engine spark

The master and every setting then come from ``spark-submit``.
"""

from __future__ import annotations

from neardup.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
