"""The data pipeline on Apache Spark (PySpark): the replicated log as a data source, cluster-history
tables and reports, and simulator campaigns. Install with ``pip install kraft[spark]``.

The core packages never import this one (nor pyspark, pyarrow or pandas). Segment and record
decoding stays in ``kraft.records`` and ``kraft.metadata``; this package turns it into Arrow
batches and Spark DataFrames.
"""
