"""Shared helpers for the operator tools (``kraft.cli``): a blocking admin client that speaks our
wire codec, the quorum description it returns, and local process management for ``kraft cluster``.

Nothing here is used by the consensus core or the server; these modules may block, read the clock
and spawn processes.
"""
