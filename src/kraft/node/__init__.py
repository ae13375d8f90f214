"""One node: typed parts (raft, controller, broker) behind one sans-IO ``poll`` (``kraft.node.node``),
built by one ``build_node`` that the server and the simulator both call (``kraft.node.build``)."""
