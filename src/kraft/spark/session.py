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

Two implementations serve ``kraft``, with the same rows, options and errors:

* the JVM source (``kraft.spark.jvm``: Java, in the executors' JVMs), when its jar is built
  (``make`` builds it; it needs a JDK) and on the session's classpath: ``kraft_session`` adds it
  through ``spark.jars`` when it creates the session. Spark's service loader then finds it first.
  It serves batch reads of files; it hands streaming reads, and batch reads that ask a live
  quorum (``bootstrap.controllers``), to the Python source;
* the Python source (``kraft.spark.source``), registered as ``kraft`` (used where the JVM one is
  absent) and as ``kraft_python`` (always the Python one).

``KRAFT_SPARK_JVM=0`` in the environment keeps the jar off a session that ``kraft_session``
creates. ``jvm_source_active(spark)`` tells which one serves ``kraft``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

DEFAULT_MASTER = "local[*]"
JVM_ENV = "KRAFT_SPARK_JVM"


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
    conf = dict(conf or {})
    jar = _jvm_jar()
    if jar is not None:
        jars = [j for j in conf.get("spark.jars", "").split(",") if j]
        conf["spark.jars"] = ",".join([*jars, str(jar)])
    for key, value in conf.items():
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
    from kraft.spark.source import KraftDataSource, KraftPythonDataSource

    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    if not jvm_source_active(spark):
        # Spark refuses a Python source under a name its service loader already serves.
        spark.dataSource.register(KraftDataSource)
    spark.dataSource.register(KraftPythonDataSource)


def _jvm_jar() -> Any:
    if os.environ.get(JVM_ENV, "") == "0":
        return None
    try:
        from kraft.spark.jvm import jar_path
    except ImportError:
        return None
    return jar_path()


def jvm_source_active(spark: Any) -> bool:
    """Whether the JVM source serves ``kraft`` on ``spark`` (its jar is on the driver's classpath)."""
    jvm = spark.sparkContext._jvm
    try:
        loader = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
        jvm.java.lang.Class.forName("kraft.spark.KraftSource", False, loader)
    except Exception:
        return False
    return True
