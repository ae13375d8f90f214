"""Authentication and authorisation as pure logic (SASL mechanisms, SCRAM credentials, ACLs).

A sans-IO layer beside the metadata image: decisions are functions of (principal, operation,
resource, image), and the SASL mechanisms are state machines fed with tokens. Sockets and TLS
contexts live in the shells (``kraft.net``, ``kraft.server``).
"""
