"""The blocking clients the tools, the Spark source, the tests and the benchmarks use.

* ``connection``: ``Address``, ``parse_bootstrap``, ``Connection`` (one TCP connection, versions
  negotiated with ApiVersions on open: the one negotiation every client here uses), the errors, and
  ``BootstrapClient`` (deadline, backoff and retry rounds shared by the admin clients);
* ``admin``: ``AdminClient``, the quorum and controller admin (DescribeQuorum, the cluster id,
  features, UpdateFeatures, AddRaftVoter/RemoveRaftVoter), following the quorum leader;
* ``broker_admin``: ``BrokerAdminClient``, topics, configs, partitions and elections through the
  brokers (which forward to the active controller);
* ``controller``: ``ControllerClient``, controller APIs as a broker (or an admin) sends them;
* ``data``: ``DataClient``, what the data clients share (partition leaders from Metadata, one
  connection per broker, ListOffsets); ``producer``: ``Producer`` (Produce with Kafka's
  partitioner, batches, codecs, acks and retries); ``consumer``: ``Consumer`` (assigned partitions,
  positions, Fetch from the leaders): small blocking clients for the console tools;
* ``quorum_info``: DescribeQuorum's answer as values, and its renderings;
* ``quorum_tail``: ``QuorumTail``, the committed log of a live quorum, tailed by a real raft
  observer (``kraft.raft.node.RaftNode``) driven on its own event loop thread.

Nothing here is used by the consensus core or the server; these modules may block, read the clock
and start threads. They never import ``kraft.cli`` or ``kraft.spark``.
"""
