"""kraft: Apache Kafka's KRaft metadata quorum, in Python."""

__version__ = "0.1.0"
