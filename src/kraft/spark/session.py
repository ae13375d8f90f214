"""The SparkSession kraft needs, on this kind of machine and any cluster.

``kraft_session(master)`` applies what PySpark needs here (measured, ``../shared/spec``):

* ``SPARK_LOCAL_IP=127.0.0.1`` unless set: the host name may resolve to an address that a
  sandbox refuses; only loopback is sure to work locally;
* ``PYSPARK_PYTHON`` / ``PYSPARK_DRIVER_PYTHON`` = this interpreter unless set: otherwise the
  workers start the system python, which lacks kraft and crashes;
* no UI and no console progress bar (kraft prints its own progress);
* session time zone UTC, so timestamps read the same everywhere;

and registers the ``kraft`` data source. ``master`` defaults to ``local[*]``; any
``spark-submit --master`` URL works, as long as the workers can import ``kraft`` (install
``kraft[spark]`` there, or ship it with ``--py-files``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

DEFAULT_MASTER = "local[*]"


def kraft_session(
    master: str | None = None, app_name: str = "kraft", conf: Mapping[str, str] | None = None
) -> Any:
    """Get or create the SparkSession with kraft's settings and source registered."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master or DEFAULT_MASTER)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", os.environ["SPARK_LOCAL_IP"])
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    register(spark)
    return spark


def register(spark: Any) -> None:
    """Register the ``kraft`` data source on ``spark`` (idempotent).

    Also turns on ``spark.sql.python.filterPushdown.enabled`` (off by default in Spark 4.1-4.3),
    which the source's ``pushFilters`` option needs: with it off, Spark refuses to read a reader
    that implements ``pushFilters``. Readers that do not are unaffected.
    """
    from kraft.spark.source import KraftDataSource

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(KraftDataSource)
